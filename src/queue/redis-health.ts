import type { EventEmitter } from 'node:events';
import { errorMessage } from '../core/errors';
import type { Logger } from '../core/ports/logger';
import { isTlsErrorCode } from '../errors/network-codes';

/** While Redis stays unreachable, one reminder per this interval instead of a line per reconnect attempt. */
const DEFAULT_REMINDER_MS = 60_000;

export interface RedisHealthOptions {
  reminderMs?: number;
  now?: () => number;
}

/** REDIS_URL as an operator may see it: scheme, host, port and database; never the user or password. */
export function shownRedisUrl(redisUrl: string): string {
  try {
    const u = new URL(redisUrl);
    return `${u.protocol}//${u.host}${u.pathname && u.pathname !== '/' ? u.pathname : ''}`;
  } catch {
    return 'REDIS_URL';
  }
}

function codeOf(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** Why Redis cannot be used, in the words an operator checks first. */
export function redisCause(e: unknown): string {
  const code = codeOf(e);
  const message = errorMessage(e);
  if (/WRONGPASS|NOAUTH|invalid password|invalid username/i.test(message))
    return 'authentication failed: check REDIS_USERNAME and REDIS_PASSWORD (or the user and password in REDIS_URL)';
  if (code === 'ECONNREFUSED') return 'connection refused (ECONNREFUSED)';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `no such host (DNS, ${code})`;
  if (code === 'ETIMEDOUT') return 'no answer in time (ETIMEDOUT)';
  if (code === 'ECONNRESET') return 'connection reset (ECONNRESET)';
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return `host unreachable (${code})`;
  if (isTlsErrorCode(code))
    return `TLS handshake failed (${code}): the server's certificate must be signed by a CA the process trusts (REDIS_TLS_CA_FILE)`;
  return message.replace(/\s+/g, ' ').slice(0, 200) || 'unknown error';
}

/**
 * Causes that only say an open connection went away: how most outages begin (Redis killed, restarted,
 * failed over), before a reconnect attempt meets the real cause (refused, DNS, TLS, auth). Moving
 * from one of these to a real cause is the same outage, not a change worth a second line at once.
 */
const CONNECTION_LOST =
  /^(connection reset \(ECONNRESET\)|Connection is closed|Stream isn't writeable|(write|read) (EPIPE|ECONNABORTED))/i;

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'ECONNABORTED',
]);
const CONNECTION_MESSAGE =
  /Connection is closed|Stream isn't writeable|MaxRetriesPerRequest|max retries per request|WRONGPASS|NOAUTH|invalid password|LOADING|READONLY|MISCONF|CLUSTERDOWN|ENOTCONN|socket/i;

/** Whether an error says Redis cannot be reached or used (an outage), rather than something about one job. */
function isConnectionError(e: unknown): boolean {
  const code = codeOf(e);
  return (
    (code !== undefined && (CONNECTION_CODES.has(code) || isTlsErrorCode(code))) ||
    CONNECTION_MESSAGE.test(errorMessage(e))
  );
}

/**
 * A BullMQ worker's 'error' event in words: a connection failure is the process's one outage
 * report (RedisHealth); anything else concerns one job (its key removed or evicted, its lock lapsed
 * while Redis stalled) and says so, instead of reading as "Redis cannot be used".
 */
export function reportWorkerError(e: unknown, health: RedisHealth, logger: Logger, worker: string): void {
  if (isConnectionError(e)) return health.failed(e);
  const message = errorMessage(e);
  const missing = /Missing (key|lock) for job ([^\s.]+)\.?\s*(\w*)/.exec(message);
  if (missing) {
    logger.warn(
      { jobId: missing[2], step: missing[3] || undefined, err: message },
      `${worker}: job ${missing[2]} is no longer in Redis as BullMQ expects (its ${missing[1]} is gone: removed, evicted under memory pressure, or its lock lapsed while Redis stalled)${/^moveTo(Finished|Completed|Failed)$/.test(missing[3] ?? '') ? "; the job had ended and its outcome was already written, only the queue's bookkeeping of it failed" : ''}. Redis itself answers.`,
    );
    return;
  }
  logger.warn({ err: message }, `${worker}: BullMQ reported an error that is not a Redis outage`);
}

/**
 * One view per process of whether Redis can be used, fed by every connection's events. It logs the
 * first failure once, naming REDIS_URL and the cause, then a reminder at a calm interval, and the
 * recovery; readiness and QUEUE_UNAVAILABLE errors use the same words.
 */
export class RedisHealth {
  readonly shownUrl: string;
  private downSince: number | undefined;
  private lastCause = '';
  /** The cause the last logged line named (lastCause may have moved on from a lost connection since). */
  private loggedCause = '';
  private failures = 0;
  private lastReminder = 0;
  private stopped = false;
  private readonly reminderMs: number;
  private readonly now: () => number;

  constructor(
    redisUrl: string,
    private readonly logger: Logger,
    opts: RedisHealthOptions = {},
  ) {
    this.shownUrl = shownRedisUrl(redisUrl);
    this.reminderMs = opts.reminderMs ?? DEFAULT_REMINDER_MS;
    this.now = opts.now ?? Date.now;
  }

  /** Follows a connection (ioredis) or a BullMQ queue or worker: its errors and its recoveries. */
  watch(source: EventEmitter): void {
    source.on('error', (e: unknown) => this.failed(e));
    source.on('ready', () => this.recovered());
  }

  failed(e: unknown): void {
    // Our own close (disconnecting, commands cut off by it) is not an outage.
    if (this.stopped) return;
    const cause = redisCause(e);
    const now = this.now();
    this.failures++;
    if (this.downSince === undefined) {
      this.downSince = now;
      this.lastCause = cause;
      this.loggedCause = cause;
      this.lastReminder = now;
      this.failures = 1;
      this.logger.error(
        // The driver's own words too: they name what the cause summarises (which certificate check failed).
        { redis: this.shownUrl, cause, err: errorMessage(e) },
        `Redis at ${this.shownUrl} (REDIS_URL) cannot be used: ${cause}. Retrying; commands are answered 503 QUEUE_UNAVAILABLE until it is back.`,
      );
      return;
    }
    // A lost connection that turns out to be refused (or the reverse) is named by the reminder and by
    // readiness; a change from one real cause to another (refused, then authentication) is logged at once.
    this.lastCause = cause;
    const changed = cause !== this.loggedCause;
    const telling = changed && !CONNECTION_LOST.test(this.loggedCause) && !CONNECTION_LOST.test(cause);
    if (telling || now - this.lastReminder >= this.reminderMs) {
      this.loggedCause = cause;
      this.lastReminder = now;
      this.logger.error(
        {
          redis: this.shownUrl,
          cause,
          failures: this.failures,
          downForSeconds: Math.round((now - this.downSince) / 1000),
        },
        `Redis at ${this.shownUrl} (REDIS_URL) ${changed ? 'now fails with' : 'still cannot be used'}: ${cause} (for ${Math.round((now - this.downSince) / 1000)} s, ${this.failures} failed attempts)`,
      );
    }
  }

  /** The process is closing its connections: their errors from now on are its own doing. */
  stop(): void {
    this.stopped = true;
  }

  recovered(): void {
    if (this.downSince === undefined) return;
    const seconds = Math.round((this.now() - this.downSince) / 1000);
    this.downSince = undefined;
    this.logger.info(
      { redis: this.shownUrl, downForSeconds: seconds },
      `Redis at ${this.shownUrl} (REDIS_URL) is reachable again after ${seconds} s`,
    );
  }

  /** "Redis at redis://host:6379 (REDIS_URL): connection refused (ECONNREFUSED)": for 503s and /readyz. */
  describe(fallback: string): string {
    return `Redis at ${this.shownUrl} (REDIS_URL): ${this.downSince !== undefined ? this.lastCause : fallback}`;
  }
}
