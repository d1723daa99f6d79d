import { setMaxListeners } from 'node:events';
import type { CommandContext } from '../command-runner';
import { parseFusionConfig, type FusionConfig } from '../config/fusion-config';
import type { CoreDeps } from '../core-deps';
import { createRunLogger } from '../logging/run-logger';
import type { LogSink } from '../ports/log-sink';
import type { PlatformSession } from '../ports/platform';
import { secretsOf } from '../../secrets/redaction';

/** What every connector command works with: the validated config, its logger and a platform session. */
export interface CommandScope {
  config: FusionConfig;
  ctx: CommandContext;
  platform: PlatformSession;
  /**
   * A session NOT bound to the command's signal (each call ends within CLEANUP_TIMEOUT_MS), for the
   * clean-up a cancelled or timed-out command must still do, e.g. taking its processing flag down.
   */
  detached(): PlatformSession;
}

const CLEANUP_TIMEOUT_MS = 30_000;

/**
 * Runs `body` with the parsed configuration, the level-filtered logger (plus the external sink
 * when "Enable external logging?" is on) and a platform session, releasing both at the end.
 */
export async function* withScope<T>(
  deps: CoreDeps,
  raw: Record<string, unknown>,
  ctx: CommandContext,
  body: (scope: CommandScope) => AsyncIterable<T>,
): AsyncIterable<T> {
  const config = parseFusionConfig(raw);
  // Every in-flight platform call listens on the command's signal (up to maxConcurrentRequests at once).
  setMaxListeners(Math.max(50, config.maxConcurrentRequests * 4), ctx.signal);
  let sink: LogSink | undefined;
  if (config.externalLoggingEnabled && deps.externalLogSink) sink = deps.externalLogSink(config.externalLoggingUrl);
  const logger = createRunLogger(
    ctx.logger,
    config.logLevel,
    sink ? { sink, level: config.externalLoggingLevel } : undefined,
    ctx.logFields,
    secretsOf(raw),
  );
  const scoped: CommandContext = { ...ctx, logger };
  const platform = deps.platform(raw, { signal: ctx.signal, logger });
  let cleanup: PlatformSession | undefined;
  const detached = (): PlatformSession =>
    (cleanup ??= deps.platform(raw, { signal: AbortSignal.timeout(CLEANUP_TIMEOUT_MS), logger, purpose: 'cleanup' }));
  try {
    yield* body({ config, ctx: scoped, platform, detached });
  } catch (e) {
    // Through the run logger, which hides the configuration's secrets a message may quote.
    logger.error(
      { err: e instanceof Error ? { message: e.message, code: (e as { code?: string }).code } : String(e) },
      'Command failed',
    );
    throw e;
  } finally {
    platform.close();
    cleanup?.close();
    await sink?.close();
  }
}
