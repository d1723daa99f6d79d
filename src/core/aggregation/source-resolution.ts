import type { FusionConfig } from '../config/fusion-config';
import { FusionError } from '../errors';
import type { Logger } from '../ports/logger';
import type { CallOptions, PlatformPort, PlatformSource, PlatformTask } from '../ports/platform';

export interface ResolvedSources {
  /** The connector's own source (holds its accounts and its state in connectorAttributes). */
  own: PlatformSource;
  /** Configured authoritative sources that are enabled, in configuration order. */
  active: PlatformSource[];
  /** Configured sources skipped because their Enabled setting is off. */
  skipped: string[];
}

export async function findOwnSource(
  platform: PlatformPort,
  config: FusionConfig,
  opts: CallOptions,
): Promise<{ own: PlatformSource; all: PlatformSource[] }> {
  requireInstanceId(config);
  const all: PlatformSource[] = [];
  for await (const s of platform.listSources(opts)) all.push(s);
  return { own: ownSourceAmong(all, config), all };
}

/** The connector's own source can only be found with its instance id: refused before any call without one. */
export function requireInstanceId(config: Pick<FusionConfig, 'spConnectorInstanceId'>): void {
  if (config.spConnectorInstanceId === '') {
    throw new FusionError(
      'CONFIG_INVALID',
      'Invalid configuration: spConnectorInstanceId = "": allowed the connector instance id the platform sets on the source (it identifies the connector\'s own source). The platform fills it in on the source; outside the platform read it from the source (GET /v3/sources/{id}: connectorAttributes.spConnectorInstanceId), or from the simulator\'s ready line or --write-config file.',
      { field: 'spConnectorInstanceId' },
    );
  }
}

/** The source whose connector instance id is the configuration's; SOURCE_NOT_FOUND when none is. */
export function ownSourceAmong(
  all: readonly PlatformSource[],
  config: Pick<FusionConfig, 'spConnectorInstanceId'>,
): PlatformSource {
  requireInstanceId(config);
  const own = all.find((s) => s.connectorAttributes.spConnectorInstanceId === config.spConnectorInstanceId);
  if (!own) {
    throw new FusionError(
      'SOURCE_NOT_FOUND',
      `No source on the platform has connector instance id ${config.spConnectorInstanceId}: the connector's own source was not found. Use the connectorAttributes.spConnectorInstanceId of the connector's source (GET /v3/sources/{id}; the simulator prints it on its ready line).`,
      {
        spConnectorInstanceId: config.spConnectorInstanceId,
      },
    );
  }
  return own;
}

/** Exact, case-sensitive names; a missing name is an error listing the names that exist. */
export async function resolveSources(
  platform: PlatformPort,
  config: FusionConfig,
  logger: Logger,
  opts: CallOptions,
): Promise<ResolvedSources> {
  const { own, all } = await findOwnSource(platform, config, opts);
  const byName = new Map(all.map((s) => [s.name, s]));
  const missing = config.sources.filter((n) => !byName.has(n));
  if (missing.length > 0) {
    const existing = all.filter((s) => s.id !== own.id).map((s) => JSON.stringify(s.name));
    throw new FusionError(
      'SOURCE_NOT_FOUND',
      `Authoritative source${missing.length > 1 ? 's' : ''} ${missing.map((m) => JSON.stringify(m)).join(', ')} not found (names are exact and case-sensitive); sources that exist: ${existing.join(', ') || '(none)'}`,
      { missing, existing: all.map((s) => s.name) },
    );
  }
  const active: PlatformSource[] = [];
  const skipped: string[] = [];
  for (const name of config.sources) {
    const source = byName.get(name) as PlatformSource;
    if (!source.enabled) {
      skipped.push(name);
      logger.warn(
        { source: name },
        `Source "${name}" is disabled (Enabled is off): its accounts are skipped in this aggregation`,
      );
    } else {
      active.push(source);
    }
  }
  return { own, active, skipped };
}

/**
 * Waits between task polls; the abort listener is removed on every path, since a poll loop may run for half an hour.
 */
const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(t);
      reject(new FusionError('COMMAND_CANCELLED', 'The aggregation was cancelled'));
    };
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/**
 * "Force aggregation before processing?": runs the source's aggregation and waits for it within provisioningTimeout.
 */
export async function forceAggregation(
  platform: PlatformPort,
  source: PlatformSource,
  timeoutSeconds: number,
  pollMs: number,
  logger: Logger,
  opts: CallOptions,
): Promise<PlatformTask> {
  logger.info({ source: source.name }, `Forcing an aggregation of source "${source.name}" before processing`);
  const deadline = Date.now() + timeoutSeconds * 1000;
  let task = await platform.startAggregation(source.id, opts);
  for (;;) {
    if (task.state === 'SUCCESS' || task.state === 'WARNING') {
      if (task.state === 'WARNING')
        logger.warn(
          { source: source.name, messages: task.messages },
          `Forced aggregation of "${source.name}" finished with warnings`,
        );
      return task;
    }
    if (task.state === 'ERROR' || task.state === 'TERMINATED') {
      throw new FusionError(
        'AGGREGATION_FAILED',
        `Forced aggregation of source "${source.name}" ended with ${task.state}${task.messages.length ? `: ${task.messages.join('; ')}` : ''}; fix the source or turn "Force aggregation before processing?" off for it`,
        { source: source.name, taskId: task.id, state: task.state },
      );
    }
    if (Date.now() >= deadline) {
      throw new FusionError(
        'AGGREGATION_FAILED',
        `Forced aggregation of source "${source.name}" did not finish within the provisioning timeout of ${timeoutSeconds} s (task ${task.id} is ${task.state}); raise provisioningTimeout (600 to 1800 s are suggested for large sources)`,
        { source: source.name, taskId: task.id, state: task.state, reason: 'timeout' },
      );
    }
    await sleep(Math.max(1, Math.min(pollMs, deadline - Date.now())), opts.signal);
    task = await platform.getTask(task.id, opts);
  }
}
