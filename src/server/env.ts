import { FusionError } from '../core/errors';
import { LOG_LEVELS, type LogLevel } from '../observability/logger';

export type Role = 'all' | 'api' | 'worker';

/** The validated operator environment (DESIGN.md §6 plus the server's own tuning variables). */
export interface ServerEnv {
  PORT: number;
  HOST: string;
  PROXY_PASSWORD: string | undefined;
  PROXY_PATH: string;
  REDIS_URL: string | undefined;
  /** Redis ACL user when REDIS_URL names none. */
  REDIS_USERNAME: string | undefined;
  /** Redis password as is (never URL-encoded) when REDIS_URL carries none: the chart passes it from a Secret. */
  REDIS_PASSWORD: string | undefined;
  /** PEM file of the CA(s) that sign the Redis server's certificate (rediss:// only). */
  REDIS_TLS_CA_FILE: string | undefined;
  ROLE: Role;
  LOG_LEVEL: LogLevel;
  BODY_LIMIT_BYTES: number;
  REQUEST_TIMEOUT_MS: number;
  WORKER_CONCURRENCY: number;
  WORKER_QUICK_CONCURRENCY: number;
  HEARTBEAT_INTERVAL_MS: number;
  JOB_ENCRYPTION_KEY: string | undefined;
  QUEUE_NAME: string;
  AUTH_MAX_FAILURES: number;
  AUTH_FAILURE_WINDOW_MS: number;
  SHUTDOWN_GRACE_MS: number;
  /** BullMQ job lock of a worker (renewed every half of it): a dead worker's job is free once it lapses. */
  WORKER_LOCK_MS: number;
  /** How often workers look for jobs whose lock lapsed (a dead worker's). */
  WORKER_STALLED_INTERVAL_MS: number;
  METRICS_ENABLED: boolean;
  /** Separate port for GET /metrics (then not served on PORT); unset = /metrics on PORT. */
  METRICS_PORT: number | undefined;
  /** Threads one matching may use (the command's own included); unset = every core. */
  MATCHING_THREADS: number | undefined;
  /** Rules aggregations decided in partitions, one thread each beside the run's own (issue 27). */
  MATCHING_PARTITIONS: boolean;
  /** Matching child jobs per call of a large aggregation (queue mode); unset = one per worker process; 0 = none. */
  MATCHING_SHARD_JOBS: number | undefined;
  /** Fastify trustProxy: false, true, a hop count, or a comma-separated list of addresses/CIDRs. */
  TRUST_PROXY: boolean | number | string;
  POD_DELETION_COST: boolean;
  POD_NAME: string | undefined;
  POD_NAMESPACE: string | undefined;
}

type Parser<T> = (raw: string) => T;

interface Field<T> {
  default?: T;
  parse: Parser<T>;
  doc: string;
}

function int(min: number, max: number): Parser<number> {
  return (raw) => {
    if (!/^\d+$/.test(raw.trim())) throw new Error(`must be a whole number between ${min} and ${max}`);
    const n = Number(raw);
    if (n < min || n > max) throw new Error(`must be between ${min} and ${max}`);
    return n;
  };
}

function oneOf<T extends string>(values: readonly T[]): Parser<T> {
  return (raw) => {
    if (!(values as readonly string[]).includes(raw)) throw new Error(`must be one of ${values.join(', ')}`);
    return raw as T;
  };
}

const text: Parser<string> = (raw) => raw;

const bool: Parser<boolean> = (raw) => {
  if (['true', '1', 'yes'].includes(raw.toLowerCase())) return true;
  if (['false', '0', 'no'].includes(raw.toLowerCase())) return false;
  throw new Error('must be true or false');
};

const redisUrl: Parser<string> = (raw) => {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new Error('must be a URL such as redis://host:6379');
  }
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:') throw new Error('must start with redis:// or rediss://');
  return raw;
};

const path: Parser<string> = (raw) => {
  if (!raw.startsWith('/') || /\s|\?|#/.test(raw)) throw new Error('must be an absolute URL path such as / or /proxy');
  return raw;
};

const absoluteFile: Parser<string> = (raw) => {
  if (!raw.startsWith('/')) throw new Error('must be an absolute file path');
  return raw;
};

const secret: Parser<string> = (raw) => {
  if (raw.length === 0) throw new Error('must not be empty');
  return raw;
};

/** Checked at boot, so a bad key stops the process naming the variable instead of failing the first job. */
const encryptionKey: Parser<string> = (raw) => {
  const bytes = /^[0-9a-fA-F]{64}$/.test(raw)
    ? 32
    : /^[A-Za-z0-9+/]+={0,2}$/.test(raw)
      ? Buffer.from(raw, 'base64').length
      : 0;
  if (bytes !== 32) throw new Error('must be 32 bytes, written as 64 hex digits or as base64');
  return raw;
};

const trustProxy: Parser<boolean | number | string> = (raw) => {
  const v = raw.trim();
  if (/^(true|false)$/i.test(v)) return v.toLowerCase() === 'true';
  if (/^\d+$/.test(v)) return Number(v);
  if (/^[0-9A-Fa-f:./]+(\s*,\s*[0-9A-Fa-f:./]+)*$/.test(v)) return v;
  throw new Error('must be true, false, a number of proxy hops, or comma-separated addresses/CIDRs of the proxies');
};

const MB = 1024 * 1024;

/** The schema: one entry per variable, with its default and its parser. */
export const ENV_SCHEMA: { [K in keyof ServerEnv]: Field<ServerEnv[K]> } = {
  PORT: { default: 8080, parse: int(0, 65535), doc: 'TCP port of the api' },
  HOST: { default: '0.0.0.0', parse: text, doc: 'address the api listens on' },
  PROXY_PASSWORD: { parse: secret, doc: 'shared secret compared with config.proxyPassword (required for the api)' },
  PROXY_PATH: { default: '/', parse: path, doc: 'path of the proxy endpoint' },
  REDIS_URL: { parse: redisUrl, doc: 'Redis for queue mode; unset = embedded mode' },
  REDIS_USERNAME: { parse: text, doc: 'Redis ACL user, when REDIS_URL names none' },
  REDIS_PASSWORD: {
    parse: secret,
    doc: 'Redis password as is (not URL-encoded), when REDIS_URL carries none; e.g. from a Secret',
  },
  REDIS_TLS_CA_FILE: {
    parse: absoluteFile,
    doc: 'PEM file of the CA(s) that sign the Redis server certificate (a private CA); needs a rediss:// REDIS_URL',
  },
  ROLE: { default: 'all', parse: oneOf(['all', 'api', 'worker'] as const), doc: 'api, worker or both' },
  LOG_LEVEL: { default: 'info', parse: oneOf(LOG_LEVELS), doc: 'error | warn | info | debug' },
  BODY_LIMIT_BYTES: { default: 10 * MB, parse: int(1024, 1024 * MB), doc: 'largest accepted request body' },
  REQUEST_TIMEOUT_MS: {
    default: 5 * 60 * 1000,
    parse: int(10, 24 * 3600 * 1000),
    doc: 'longest wait for a command to start or show progress',
  },
  WORKER_CONCURRENCY: {
    default: 4,
    parse: int(1, 1000),
    doc: 'aggregations and entitlement lists run at once per worker (or per embedded process)',
  },
  WORKER_QUICK_CONCURRENCY: {
    default: 4,
    parse: int(1, 1000),
    doc: 'test connections and single-account commands run at once per worker, in slots of their own',
  },
  HEARTBEAT_INTERVAL_MS: {
    default: 15_000,
    parse: int(10, 30_000),
    doc: 'blank line sent after this much silence (at most 30 s)',
  },
  JOB_ENCRYPTION_KEY: {
    parse: encryptionKey,
    doc: '32-byte key (hex or base64) sealing job payloads; derived from PROXY_PASSWORD when unset',
  },
  QUEUE_NAME: {
    default: 'fusion-commands',
    parse: (raw) =>
      /^[A-Za-z0-9_-]{1,64}$/.test(raw)
        ? raw
        : (() => {
            throw new Error('must be 1-64 letters, digits, - or _');
          })(),
    doc: 'BullMQ queue name',
  },
  AUTH_MAX_FAILURES: {
    default: 10,
    parse: int(1, 1_000_000),
    doc: 'failed passwords per address and window before 429',
  },
  AUTH_FAILURE_WINDOW_MS: { default: 60_000, parse: int(100, 24 * 3600 * 1000), doc: 'window of AUTH_MAX_FAILURES' },
  SHUTDOWN_GRACE_MS: {
    default: 30_000,
    parse: int(0, 3600 * 1000),
    doc: 'on SIGTERM, how long running commands may finish',
  },
  WORKER_LOCK_MS: {
    default: 30_000,
    parse: int(5_000, 3600 * 1000),
    doc: "job lock of a worker, renewed every half of it; a killed worker's job is noticed within WORKER_LOCK_MS + WORKER_STALLED_INTERVAL_MS",
  },
  WORKER_STALLED_INTERVAL_MS: {
    default: 10_000,
    parse: int(1_000, 3600 * 1000),
    doc: "how often workers check for jobs whose lock lapsed (a dead worker's); each check is one Redis script",
  },
  METRICS_ENABLED: { default: true, parse: bool, doc: 'serve GET /metrics' },
  METRICS_PORT: {
    parse: int(0, 65535),
    doc: 'TCP port of a second listener serving only GET /metrics (then PORT does not); unset or equal to PORT = /metrics on PORT',
  },
  MATCHING_THREADS: {
    parse: int(1, 256),
    doc: "threads one aggregation's matching may use, its own included (1 = in-thread); unset = every core the process sees",
  },
  MATCHING_PARTITIONS: {
    // On: against the usual matcher with as many threads, 1.16-1.40x as fast on 2 cores and one copy of
    // the baseline instead of one per thread (docs/aggregation.md, "Partitions").
    default: true,
    parse: bool,
    doc: "rules aggregations with a mandatory Double Metaphone or exact attribute decide their new accounts in MATCHING_THREADS - 1 partitions, one thread each, while the run's own thread reads and emits (in place of child jobs); the same output; false = the usual matcher's threads",
  },
  MATCHING_SHARD_JOBS: {
    parse: int(0, 64),
    doc: "queue mode: child jobs one call of a large aggregation's matching is spread over, any worker taking them (0 = none: threads only); unset = one per worker process serving them (at most 8)",
  },
  TRUST_PROXY: {
    default: false,
    parse: trustProxy,
    doc: 'trust X-Forwarded-For from these proxies (client address for the auth throttle and logs)',
  },
  POD_DELETION_COST: {
    default: false,
    parse: bool,
    doc: "workers: keep this pod's controller.kubernetes.io/pod-deletion-cost at the number of commands it runs, so a scale-in removes idle workers first (needs POD_NAME, POD_NAMESPACE and a service account allowed to patch pods)",
  },
  POD_NAME: { parse: text, doc: "this pod's name, from the downward API (POD_DELETION_COST)" },
  POD_NAMESPACE: { parse: text, doc: "this pod's namespace, from the downward API (POD_DELETION_COST)" },
};

/**
 * Validates the environment at boot. Every problem names its variable; the process refuses
 * to start rather than run with a surprising setting.
 */
export function loadEnv(source: NodeJS.ProcessEnv = process.env): ServerEnv {
  const problems: string[] = [];
  const out: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(ENV_SCHEMA) as Array<[keyof ServerEnv, Field<unknown>]>) {
    const raw = source[name];
    if (raw === undefined || raw === '') {
      out[name] = field.default;
      continue;
    }
    try {
      out[name] = field.parse(raw);
    } catch (e) {
      // Never echo the value: it may be a secret.
      problems.push(`${name} ${(e as Error).message}`);
    }
  }
  const env = out as unknown as ServerEnv;
  if (problems.length === 0) {
    if (env.ROLE === 'worker' && !env.REDIS_URL) problems.push('REDIS_URL is required when ROLE=worker');
    if (env.ROLE === 'api' && !env.REDIS_URL)
      problems.push('REDIS_URL is required when ROLE=api (without it, use ROLE=all for embedded mode)');
    if (env.REDIS_URL && env.ROLE !== 'worker' && !env.PROXY_PASSWORD)
      problems.push('PROXY_PASSWORD is required for the api in queue mode');
    const url = env.REDIS_URL ? new URL(env.REDIS_URL) : undefined;
    for (const name of ['REDIS_USERNAME', 'REDIS_PASSWORD', 'REDIS_TLS_CA_FILE'] as const)
      if (env[name] !== undefined && !url) problems.push(`${name} needs REDIS_URL`);
    if (url && env.REDIS_PASSWORD !== undefined && url.password !== '')
      problems.push('REDIS_PASSWORD is set and REDIS_URL carries a password too: keep one (REDIS_URL without it)');
    if (url && env.REDIS_USERNAME !== undefined && url.username !== '')
      problems.push('REDIS_USERNAME is set and REDIS_URL names a user too: keep one');
    if (url && env.REDIS_TLS_CA_FILE !== undefined && url.protocol !== 'rediss:')
      problems.push('REDIS_TLS_CA_FILE needs a rediss:// REDIS_URL (TLS)');
    if (env.POD_DELETION_COST && (!env.POD_NAME || !env.POD_NAMESPACE))
      problems.push(
        'POD_DELETION_COST needs POD_NAME and POD_NAMESPACE (the downward API: metadata.name, metadata.namespace)',
      );
    if (env.POD_DELETION_COST && !env.REDIS_URL)
      problems.push('POD_DELETION_COST needs queue mode (REDIS_URL): it is the cost of a worker pod');
    if (env.POD_DELETION_COST && env.ROLE === 'api')
      problems.push('POD_DELETION_COST is for workers (ROLE=worker or all): an api pod runs no commands');
    if (env.REDIS_URL && !env.PROXY_PASSWORD && !env.JOB_ENCRYPTION_KEY) {
      problems.push('JOB_ENCRYPTION_KEY (or PROXY_PASSWORD) is required in queue mode to seal job payloads');
    }
  }
  if (problems.length > 0) {
    throw new FusionError('CONFIG_INVALID', `invalid environment: ${problems.join('; ')}`, {
      variables: problems.map((p) => p.split(' ')[0]),
    });
  }
  return env;
}
