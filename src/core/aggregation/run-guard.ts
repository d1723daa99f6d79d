/**
 * "Enable concurrency check?": one aggregation per connector source at a time.
 *
 * Two layers. The run lock (Redis in queue mode, memory in embedded mode) is the real mutual
 * exclusion: token-checked and renewed, it frees itself when a holder dies. The processing flag on
 * the platform source (connectorAttributes.processing = {runId, startedAt}) is the spec's
 * operator-visible marker: a flag found while we hold the lock was left by a run that did not
 * finish. When that run took its lock from our lock's scope (same Redis), holding the lock proves
 * it ended (a worker killed mid-run): the flag is replaced and this run proceeds. Otherwise
 * (another deployment sharing the source, a flag from before a Redis wipe or without a scope) it
 * is cleared and this run fails asking the operator to confirm that no other aggregation runs;
 * the next run proceeds, as the spec says.
 */
import { FusionError, isFusionError } from '../errors';
import type { Logger } from '../ports/logger';
import type { CallOptions, PlatformPort, PlatformSource } from '../ports/platform';
import { holdRunLock, sourceLockKey, type HeldLock, type RunLock } from '../ports/run-lock';
import { lockAttempts } from './metrics';

const PROCESSING_KEY = 'processing';

/** Default wait for a lock held by another run (one that is stopping frees it within a few seconds). */
const RUN_WAIT_MS = 10_000;

export interface RunGuard {
  /** Throws AGGREGATION_LOCK_LOST once a renewal found the lock taken or expired. */
  assertHeld(): void;
  /**
   * Renews the lock now and throws AGGREGATION_LOCK_LOST when it is no longer ours; called before
   * counters are persisted. A renewal that errors (Redis blip) falls back to the periodic renewals.
   */
  confirmHeld(): Promise<void>;
  /**
   * Clears the processing flag (only our own once the lock was lost) and frees the lock. After a
   * run that failed or was stopped (`afterFailure`), a flag that cannot be cleared is logged, not
   * thrown: the run's own error is what the caller must hear.
   */
  release(afterFailure?: boolean): Promise<void>;
}

export async function enterRun(
  args: {
    platform: PlatformPort;
    /** A session not bound to the command's signal: a cancelled run must still clear its flag. */
    detached?: () => PlatformPort;
    lock: RunLock;
    source: PlatformSource;
    tenant: string;
    runId: string;
    ttlMs: number;
    /** How long a run waits for another run's lock before AGGREGATION_IN_PROGRESS; default RUN_WAIT_MS. */
    runWaitMs?: number;
    logger: Logger;
    now: () => Date;
  },
  opts: CallOptions,
): Promise<RunGuard> {
  const { platform, lock, source, runId, logger } = args;
  const key = sourceLockKey(args.tenant, source.id);
  const held: HeldLock | undefined = await holdRunLock(lock, key, runId, {
    ttlMs: args.ttlMs,
    // A run whose client just left frees the lock once its flag is down (in queue mode after the
    // worker heard the cancel): the platform's next aggregation, sent at once, waits for that.
    runWaitMs: args.runWaitMs ?? RUN_WAIT_MS,
    onLost: () =>
      logger.error(
        { source: source.name },
        'The aggregation lost its run lock (renewal failed); another run may start',
      ),
    onReleaseFailed: (e) =>
      logger.warn(
        { source: source.name, err: e instanceof Error ? e.message : String(e), ttlMs: args.ttlMs },
        'Could not release the run lock; it frees itself within its TTL',
      ),
  });
  if (!held) {
    lockAttempts.inc({ result: 'busy' });
    throw new FusionError(
      'AGGREGATION_IN_PROGRESS',
      `Another aggregation of source "${source.name}" is in progress (its run lock was still held after ${Math.round((args.runWaitMs ?? RUN_WAIT_MS) / 1000)} s); wait for it to finish, then run again`,
      {
        sourceId: source.id,
      },
    );
  }
  try {
    const scope = await lock.scope();
    const fresh = await platform.getSource(source.id, opts);
    const flag = fresh.connectorAttributes[PROCESSING_KEY];
    const deadRunOfOurScope =
      typeof flag === 'object' && flag !== null && (flag as { scope?: unknown }).scope === scope;
    if (deadRunOfOurScope) {
      logger.warn(
        { source: source.name, flag },
        "Replacing the processing flag of an aggregation that ended without clearing it (its process died); this deployment's run lock proves it is not running",
      );
      lockAttempts.inc({ result: 'stale' });
    } else if (flag !== undefined && flag !== null && flag !== false && flag !== '' && flag !== 'false') {
      await platform.patchSourceConnectorAttributes(source.id, { [PROCESSING_KEY]: null }, opts);
      logger.warn(
        { source: source.name, flag },
        'Cleared a processing flag left by an aggregation that did not finish',
      );
      lockAttempts.inc({ result: 'stale' });
      throw new FusionError(
        'AGGREGATION_STALE_FLAG',
        `The previous aggregation of source "${source.name}" did not finish (processing flag ${describeFlag(flag)}). The flag has been cleared: confirm that no other aggregation of this source is running, then run the aggregation again`,
        { sourceId: source.id, flag },
      );
    }
    await platform.patchSourceConnectorAttributes(
      source.id,
      { [PROCESSING_KEY]: { runId, startedAt: args.now().toISOString(), scope } },
      opts,
    );
    lockAttempts.inc({ result: 'acquired' });
  } catch (e) {
    await held.release();
    throw e;
  }
  const runLock = held;
  const clearAndFree = async (): Promise<void> => {
    if (runLock.lost) {
      // The flag may now be another run's: clear it only while it is still ours.
      try {
        const now = (await (args.detached?.() ?? platform).getSource(source.id)).connectorAttributes[PROCESSING_KEY];
        if (now && typeof now === 'object' && (now as { runId?: unknown }).runId === runId) {
          await (args.detached?.() ?? platform).patchSourceConnectorAttributes(source.id, { [PROCESSING_KEY]: null });
        }
      } finally {
        await runLock.release();
      }
      return;
    }
    try {
      // The command's session stops every call once its signal aborts (cancel, timeout): a
      // cancelled run clears its flag through a session of its own.
      // A failed run's session may be the reason it failed (the shared rate limiter lost Redis,
      // the platform briefly refused): whatever stopped the first try, once more, detached,
      // whose limiter falls back to this process's budget.
      const clear = (p: PlatformPort) => p.patchSourceConnectorAttributes(source.id, { [PROCESSING_KEY]: null });
      try {
        await clear(opts.signal?.aborted && args.detached ? args.detached() : platform);
      } catch (e) {
        if (!args.detached) throw e;
        logger.warn(
          { source: source.name, err: e instanceof Error ? e.message : String(e) },
          'Could not clear the processing flag; trying again on a clean-up session',
        );
        await clear(args.detached());
      }
    } finally {
      await runLock.release();
    }
  };
  const lostError = () =>
    new FusionError(
      'AGGREGATION_LOCK_LOST',
      `The aggregation of source "${source.name}" lost its run lock (renewal failed or expired) and another run may have started; it stopped so that both runs do not issue the same values. Run the aggregation again`,
      { sourceId: source.id, runId },
    );
  return {
    assertHeld() {
      if (held.lost) throw lostError();
    },
    async confirmHeld() {
      let ok: boolean;
      try {
        ok = await held.renew();
      } catch (e) {
        logger.warn(
          { source: source.name, err: e instanceof Error ? e.message : String(e) },
          'Could not renew the run lock; relying on the periodic renewals',
        );
        ok = !held.lost;
      }
      if (!ok) throw lostError();
    },
    async release(afterFailure = false) {
      try {
        await clearAndFree();
      } catch (e) {
        if (afterFailure) {
          logger.warn(
            { source: source.name, err: e instanceof Error ? e.message : String(e) },
            'Could not clear the processing flag after the run stopped; the next run of this deployment replaces it',
          );
          return;
        }
        throw flagNotCleared(source.name, e);
      }
    },
  };
}

/**
 * The run did its work (every item went out), but the platform refused the last write: say so,
 * instead of the bare error of that call (which read "cancelled" when the clean-up session's
 * deadline stopped it). The code stays the platform's, so retry decisions and alerts keep it.
 */
function flagNotCleared(sourceName: string, e: unknown): FusionError {
  const code = isFusionError(e) ? e.code : 'PLATFORM_REQUEST_FAILED';
  const cause = e instanceof Error ? e.message : String(e);
  return new FusionError(
    code,
    `The aggregation of source "${sourceName}" sent every account, then could not clear its processing flag on the platform: ${cause.replace(/[.\s]+$/, '')}. The run is reported failed so that the platform does not take it as complete; the next run of this deployment replaces the flag. Check the platform, then run the aggregation again`,
    { sourceName, step: 'clear-processing-flag' },
    { cause: e },
  );
}

function describeFlag(flag: unknown): string {
  if (flag && typeof flag === 'object') {
    const f = flag as { runId?: unknown; startedAt?: unknown };
    return `set by run ${String(f.runId ?? '?')} at ${String(f.startedAt ?? '?')}`;
  }
  return JSON.stringify(flag);
}
