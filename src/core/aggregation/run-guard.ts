/**
 * "Enable concurrency check?": one aggregation per connector source at a time.
 *
 * Two layers. The run lock (Redis in queue mode, memory in embedded mode) is the real mutual
 * exclusion: token-checked and renewed, it frees itself when a holder dies. The processing flag on
 * the platform source (connectorAttributes.processing = {runId, startedAt}) is the spec's
 * operator-visible marker: a flag found while we hold the lock was left by a run that did not
 * finish, so it is cleared and this run fails asking the operator to confirm that no other
 * aggregation runs (for example from another deployment sharing the source); the next run proceeds.
 */
import { FusionError } from '../errors';
import type { Logger } from '../ports/logger';
import type { CallOptions, PlatformPort, PlatformSource } from '../ports/platform';
import { holdRunLock, sourceLockKey, type HeldLock, type RunLock } from '../ports/run-lock';
import { lockAttempts } from './metrics';

export const PROCESSING_KEY = 'processing';

export interface RunGuard {
  release(): Promise<void>;
}

export async function enterRun(
  args: {
    platform: PlatformPort;
    /** A session not bound to the command's signal: a cancelled run must still clear its flag. */
    detached?: () => PlatformPort;
    lock: RunLock; source: PlatformSource; tenant: string; runId: string;
    ttlMs: number;
    logger: Logger;
    now: () => Date;
  },
  opts: CallOptions,
): Promise<RunGuard> {
  const { platform, lock, source, runId, logger } = args;
  const key = sourceLockKey(args.tenant, source.id);
  const held: HeldLock | undefined = await holdRunLock(lock, key, runId, {
    ttlMs: args.ttlMs,
    onLost: () => logger.error({ source: source.name }, 'The aggregation lost its run lock (renewal failed); another run may start'),
  });
  if (!held) {
    lockAttempts.inc({ result: 'busy' });
    throw new FusionError('AGGREGATION_IN_PROGRESS', `Another aggregation of source "${source.name}" is in progress; wait for it to finish, then run again`, {
      sourceId: source.id,
    });
  }
  try {
    const fresh = await platform.getSource(source.id, opts);
    const flag = fresh.connectorAttributes[PROCESSING_KEY];
    if (flag !== undefined && flag !== null && flag !== false && flag !== '' && flag !== 'false') {
      await platform.patchSourceConnectorAttributes(source.id, { [PROCESSING_KEY]: null }, opts);
      logger.warn({ source: source.name, flag }, 'Cleared a processing flag left by an aggregation that did not finish');
      lockAttempts.inc({ result: 'stale' });
      throw new FusionError(
        'AGGREGATION_STALE_FLAG',
        `The previous aggregation of source "${source.name}" did not finish (processing flag ${describeFlag(flag)}). The flag has been cleared: confirm that no other aggregation of this source is running, then run the aggregation again`,
        { sourceId: source.id, flag },
      );
    }
    await platform.patchSourceConnectorAttributes(source.id, { [PROCESSING_KEY]: { runId, startedAt: args.now().toISOString() } }, opts);
    lockAttempts.inc({ result: 'acquired' });
  } catch (e) {
    await held.release();
    throw e;
  }
  return {
    async release() {
      try {
        // The command's session stops every call once its signal aborts (cancel, timeout): a
        // cancelled run clears its flag through a session of its own.
        const clear = (p: PlatformPort) => p.patchSourceConnectorAttributes(source.id, { [PROCESSING_KEY]: null });
        try {
          await clear(opts.signal?.aborted && args.detached ? args.detached() : platform);
        } catch (e) {
          // Aborted while clearing: once more, detached.
          if (!opts.signal?.aborted || !args.detached) throw e;
          await clear(args.detached());
        }
      } finally {
        await held.release();
      }
    },
  };
}

function describeFlag(flag: unknown): string {
  if (flag && typeof flag === 'object') {
    const f = flag as { runId?: unknown; startedAt?: unknown };
    return `set by run ${String(f.runId ?? '?')} at ${String(f.startedAt ?? '?')}`;
  }
  return JSON.stringify(flag);
}
