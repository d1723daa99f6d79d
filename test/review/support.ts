import { randomBytes } from 'node:crypto';
import type { Logger, LogFn } from '../../src/core/ports/logger';
import type { PendingReview, ReviewCandidate } from '../../src/core/ports/review-queue';
import { ReviewFormQueue, type ReviewFormQueueOptions } from '../../src/core/review';
import type { PlatformClient } from '../../src/platform/platform-client';
import { ReviewPlatform } from '../../src/platform/review-platform';
import type { RunningSimulator } from '../../src/simulator';
import type { JsonObject } from '../../src/simulator/records';
import { clientFor, startSim } from '../platform/support';

export interface LogLine {
  level: 'error' | 'warn' | 'info' | 'debug';
  msg: string;
  obj: Record<string, unknown>;
}

export function capturingLogger(): Logger & { lines: LogLine[]; at(level: LogLine['level']): LogLine[] } {
  const lines: LogLine[] = [];
  const fn = (level: LogLine['level']): LogFn =>
    ((a: Record<string, unknown> | string, b?: string) => {
      if (typeof a === 'string') lines.push({ level, msg: a, obj: {} });
      else lines.push({ level, msg: b ?? '', obj: a });
    }) as LogFn;
  return {
    error: fn('error'),
    warn: fn('warn'),
    info: fn('info'),
    debug: fn('debug'),
    lines,
    at: (level) => lines.filter((l) => l.level === level),
  };
}

export function uid(prefix = 'acc'): string {
  return `${prefix}${randomBytes(6).toString('hex')}`;
}

export function candidates(ids: string[], scoreOf: (i: number) => number = (i) => 99 - i * 0.1): ReviewCandidate[] {
  return ids.map((id, i) => ({
    candidateId: id,
    candidateKind: 'identity',
    score: Math.round(scoreOf(i) * 10) / 10,
    scores: { email: 100, displayName: Math.round(scoreOf(i) * 10) / 10 },
  }));
}

export function pendingReview(over: Partial<PendingReview> & { candidates: ReviewCandidate[] }): PendingReview {
  return {
    accountId: uid(),
    accountName: 'Ann Lee',
    sourceName: 'LDAP',
    attributes: { displayName: 'Ann Lee', email: 'ann.lee@ldap.example.net' },
    reviewers: [],
    expiresAt: new Date(Date.now() + 7 * 86_400_000).toISOString(),
    ...over,
  };
}

/** Submits the reviews and sends them, as a run does once matching is over. */
export async function submitAndSend(queue: ReviewFormQueue, ...reviews: PendingReview[]): Promise<void> {
  for (const r of reviews) await queue.submit(r);
  await queue.send();
}

/**
 * One "run": a queue over a fresh fusion-source namespace unless `fusionSourceId` is given. Without
 * `platform` in `over`, the queue has no notification outbox (the namespace is no platform source).
 */
export class Harness {
  readonly review: ReviewPlatform;
  readonly ownerId: string;

  constructor(
    readonly sim: RunningSimulator,
    readonly client: PlatformClient,
  ) {
    this.review = new ReviewPlatform(client);
    this.ownerId = sim.tenant.meta.ownerIdentityId as string;
  }

  queue(
    fusionSourceId: string,
    over: Partial<ReviewFormQueueOptions> = {},
  ): { queue: ReviewFormQueue; log: ReturnType<typeof capturingLogger> } {
    const log = capturingLogger();
    const queue = new ReviewFormQueue({
      review: this.review,
      platform: { getIdentity: (id, opts) => this.client.getIdentity(id, opts) },
      fusionSource: { id: fusionSourceId, name: 'Identity Fusion', owner: { id: this.ownerId, name: 'owner' } },
      ownerIsGlobalReviewer: false,
      expirationDays: 7,
      topK: 10,
      logger: log,
      ...over,
    });
    return { queue, log };
  }

  /** Definitions of an account's own (forms made before shared layouts), by the "#<id>" key. */
  definitionsOf(accountId: string): JsonObject[] {
    return [...this.sim.tenant.formDefinitions.values()].filter((d) => String(d['name']).endsWith(` #${accountId}`));
  }

  /** The account's form instances the connector has not closed (own or shared definitions). */
  instancesOf(accountId: string): JsonObject[] {
    const own = new Set(this.definitionsOf(accountId).map((d) => d['id']));
    return [...this.sim.tenant.formInstances.values()].filter((i) => {
      const closed = (i['formData'] as Record<string, unknown> | null)?.['fusionClosed'];
      const input = i['formInput'] as Record<string, unknown>;
      return !closed && (own.has(i['formDefinitionId']) || input['accountId'] === accountId);
    });
  }

  /** The definition an instance belongs to. */
  definitionOf(instance: JsonObject): JsonObject {
    return this.sim.tenant.formDefinitions.get(String(instance['formDefinitionId'])) as JsonObject;
  }

  onlyInstance(accountId: string): JsonObject {
    const all = this.instancesOf(accountId);
    if (all.length !== 1) throw new Error(`expected one instance for ${accountId}, got ${all.length}`);
    return all[0] as JsonObject;
  }

  runsFor(accountId: string): Array<{ subject: string; body: string; recipients: string[] }> {
    return this.sim.control
      .workflowRuns()
      .map((r) => r.input as { subject: string; body: string; recipients: string[] })
      .filter((i) => typeof i.body === 'string' && i.body.includes(`id ${accountId})`));
  }

  /** The candidates with the display data a run takes from its baseline (identity name and attributes). */
  withDetails(list: ReviewCandidate[]): ReviewCandidate[] {
    return list.map((c) => {
      const identity = this.sim.tenant.identities.get(c.candidateId);
      return identity ? { ...c, details: { name: identity.name, attributes: identity.attributes } } : c;
    });
  }

  /** Identity ids holding "<source> Reviewer" in the simulated tenant. */
  holders(sourceName: string): string[] {
    const ap = [...this.sim.tenant.accessProfiles.values()].find((a) => a.name === `${sourceName} Reviewer`);
    return ap ? [...this.sim.tenant.identities.values()].filter((i) => i.access.includes(ap.id)).map((i) => i.id) : [];
  }

  identityIds(): string[] {
    return [...this.sim.tenant.identities.keys()];
  }
}

/**
 * One simulator (no rate limit), its client and a Harness over both for a describe block: started
 * before its tests, closed after them. `bind` receives the harness.
 */
export function useReviewSimulator(bind: (h: Harness) => void): void {
  let h: Harness | undefined;
  beforeAll(async () => {
    const sim = await startSim({ rateLimit: false });
    h = new Harness(sim, clientFor(sim));
    bind(h);
  });
  afterAll(async () => {
    h?.client.close();
    await h?.sim.close();
  });
}
