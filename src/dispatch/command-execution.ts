import type { CommandRunner } from '../core/command-runner';
import { FusionError, errorMessage, isFusionError } from '../core/errors';
import type { Logger } from '../core/ports/logger';
import { withLogFields } from '../observability/log-context';
import { redactText, secretsOf } from '../secrets/redaction';
import type { ProxyCommand } from './command-dispatcher';
import { errorsTotal } from '../observability/error-metrics';
import { noteActivity } from '../observability/final-scrape';
import { jobDuration, jobsTotal } from './metrics';
import type { OutputSink } from './output-sink';

export type CommandOutcome = 'success' | 'error' | 'cancelled';

/** Any thrown value as a FusionError whose message is safe to send to the client. */
export function toFusionError(e: unknown): FusionError {
  if (isFusionError(e)) return e;
  return new FusionError('PROXY_SERVER_ERROR', errorMessage(e) || 'command failed', {}, { cause: e });
}

/**
 * The error as it may leave the command: to the client, the logs and (queue mode) the Redis
 * stream. A message that quotes a credential (a library echoing a request, a template
 * printing $clientSecret) has it replaced, so no layer after this one has to know.
 */
function withoutSecrets(err: FusionError, secrets: readonly string[]): FusionError {
  const message = redactText(err.message, secrets);
  return message === err.message ? err : new FusionError(err.code, message, err.details, { cause: err.cause });
}

/**
 * Why an aborted command stopped: the abort reason when it is a FusionError (a worker shutting down), else a plain
 * cancel.
 */
function cancellation(signal: AbortSignal): FusionError {
  return isFusionError(signal.reason)
    ? signal.reason
    : new FusionError('COMMAND_CANCELLED', 'the command was cancelled');
}

/**
 * A command stopped by its caller (client gone, api cancel) is `cancelled`. One this process stopped
 * for its own reasons (a scale-in or rollout past SHUTDOWN_GRACE_MS) failed for the caller, who gets
 * an error and must run it again: that is an `error`, and the aggregation-failed alert sees it.
 */
function outcomeOfStop(stop: FusionError): CommandOutcome {
  return stop.code === 'COMMAND_CANCELLED' ? 'cancelled' : 'error';
}

/**
 * Runs one command through the CommandRunner seam into a sink, in either mode: metrics,
 * log fields, cancellation and the terminal end/error entry are handled here once.
 */
export async function executeCommand(
  runner: CommandRunner,
  cmd: ProxyCommand,
  sink: OutputSink,
  opts: { signal: AbortSignal; logger: Logger; component: 'embedded' | 'worker' },
): Promise<CommandOutcome> {
  // Job id and command on every line, passed explicitly: see runWithLogContext for why not in its context.
  const logFields = { jobId: cmd.requestId, command: cmd.type };
  const logger = withLogFields(opts.logger, logFields);
  const started = process.hrtime.bigint();
  let outcome: CommandOutcome = 'success';
  try {
    const ctx = { signal: opts.signal, logger, logFields, jobId: cmd.requestId, progress: () => sink.progress() };
    for await (const item of runner(cmd.type, cmd.input, cmd.config, ctx)) {
      if (opts.signal.aborted) break;
      const wait = sink.write(JSON.stringify(item));
      if (wait) await wait;
    }
    if (opts.signal.aborted) {
      const stop = cancellation(opts.signal);
      outcome = outcomeOfStop(stop);
      if (outcome === 'error') errorsTotal.inc({ component: opts.component, code: stop.code });
      await sink.fail(stop);
    } else {
      await sink.end();
    }
  } catch (e) {
    const err = withoutSecrets(
      opts.signal.aborted ? cancellation(opts.signal) : toFusionError(e),
      secretsOf(cmd.config),
    );
    outcome = opts.signal.aborted ? outcomeOfStop(err) : 'error';
    if (outcome === 'error') {
      errorsTotal.inc({
        component: opts.component,
        code: opts.signal.aborted ? err.code : isFusionError(e) ? e.code : 'UNEXPECTED',
      });
      logger.error({ code: err.code, err: err.message }, 'command failed');
    } else {
      logger.info({ code: err.code }, 'command cancelled');
    }
    try {
      await sink.fail(err);
    } catch (sinkError) {
      logger.warn({ err: errorMessage(sinkError) }, 'could not report the failure to the reader');
    }
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  jobsTotal.inc({ command: cmd.type, outcome });
  jobDuration.observe({ command: cmd.type, outcome }, seconds);
  noteActivity();
  logger.info({ outcome, seconds }, 'command finished');
  return outcome;
}
