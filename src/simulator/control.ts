import type { SimClient } from './auth';
import type { SimContext } from './context';
import type { FaultSpec } from './faults';
import type { RateLimitConfig } from './rate-limit';
import type { JsonObject, TaskOutcome, WorkflowRun } from './records';
import type { RequestLogEntry, SimulatorCounters } from './request-log';
import { playConnector, type PlayConnectorOptions } from './connector-play';
import { notFound } from './errors';

/** Test and demo hooks on a running simulator (no HTTP involved). */
export interface SimulatorControl {
  addClient(client: SimClient): void;
  /** Revokes the tokens of one client (all clients when omitted); returns how many. */
  revokeTokens(clientId?: string): number;
  setRateLimit(limit: RateLimitConfig | false): void;
  injectFault(fault: FaultSpec): void;
  clearFaults(): void;
  /** Lets requests held by a `hold` fault go on; returns how many were held. */
  releaseHeld(): number;
  /** Requests a `hold` fault holds now (one whose client left is no longer held). */
  heldRequests(): number;
  requestLog(): RequestLogEntry[];
  counters(): SimulatorCounters;
  resetLog(): void;
  /** Outcome of the next aggregation tasks of a source ('*' = every source without its own setting). */
  setAggregationOutcome(sourceId: string | '*', outcome: TaskOutcome): void;
  /**
   * Plays the platform against a connector URL: aggregations of the connector's source read it
   * through that URL while their task is open (see connector-play.ts).
   */
  playConnector(opts: PlayConnectorOptions): void;
  /** Replaces the connector source's configuration (what the platform sends with each command). */
  setConnectorConfig(config: Record<string, unknown>): void;
  /** Called when an aggregation task succeeds (e.g. to ingest the connector's output). */
  onAggregationSuccess(hook: ((sourceId: string) => Promise<void> | void) | undefined): void;
  /** Completes a form instance as a simulated reviewer. */
  completeFormInstance(
    instanceId: string,
    formData: Record<string, unknown>,
    opts?: { state?: 'COMPLETED' | 'IN_PROGRESS' | 'SUBMITTED' },
  ): JsonObject;
  /** Expires form instances (all open ones when no ids are given): their state becomes CANCELLED. */
  expireFormInstances(instanceIds?: string[]): number;
  /** Every POST /workflows/{id}/test call, in order (what the connector asked to send). */
  workflowRuns(): WorkflowRun[];
}

const OPEN_STATES = new Set(['ASSIGNED', 'IN_PROGRESS', 'SUBMITTED']);

export function createControl(ctx: SimContext): SimulatorControl {
  return {
    addClient: (c) => ctx.auth.addClient(c),
    revokeTokens: (clientId) => ctx.auth.revokeTokens(clientId),
    setRateLimit: (limit) => {
      ctx.limiter.config = limit;
      ctx.limiter.reset();
    },
    injectFault: (f) => ctx.faults.add(f),
    clearFaults: () => ctx.faults.clear(),
    releaseHeld: () => ctx.faults.releaseHeld(),
    heldRequests: () => ctx.faults.heldCount,
    requestLog: () => ctx.log.list(),
    counters: () => ctx.log.snapshot({ faultsInjected: ctx.faults.injected, tokensIssued: ctx.auth.tokensIssued }),
    resetLog: () => ctx.log.reset(),
    setAggregationOutcome: (sourceId, outcome) => {
      ctx.aggregationOutcomes.set(sourceId, outcome);
    },
    playConnector: (opts) => playConnector(ctx, opts),
    setConnectorConfig: (config) => {
      const id = ctx.tenant.meta.fusionSourceId;
      if (!id) throw new Error('the simulated tenant has no connector source');
      const source = ctx.tenant.source(id);
      // Kept: what the connector stored on its source (counters, the processing flag).
      ctx.tenant.replaceSource({
        ...source,
        connectorAttributes: { ...source.connectorAttributes, ...config },
        modified: ctx.tenant.now(),
      });
    },
    onAggregationSuccess: (hook) => {
      ctx.onAggregationSuccess = hook;
    },
    completeFormInstance: (instanceId, formData, opts = {}) => {
      const inst = ctx.tenant.formInstances.get(instanceId);
      if (!inst) throw notFound(`Form instance ${instanceId} was not found`);
      inst['formData'] = { ...((inst['formData'] as Record<string, unknown> | null) ?? {}), ...formData };
      inst['state'] = opts.state ?? 'COMPLETED';
      inst['modified'] = ctx.tenant.now();
      ctx.tenant.versions.forms++;
      return inst;
    },
    expireFormInstances: (ids) => {
      let n = 0;
      for (const inst of ctx.tenant.formInstances.values()) {
        if (ids && !ids.includes(String(inst['id']))) continue;
        if (!OPEN_STATES.has(String(inst['state']))) continue;
        inst['state'] = 'CANCELLED';
        inst['modified'] = ctx.tenant.now();
        n++;
      }
      ctx.tenant.versions.forms++;
      return n;
    },
    workflowRuns: () => [...ctx.tenant.workflowRuns],
  };
}
