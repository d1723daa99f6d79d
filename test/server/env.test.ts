import { loadEnv } from '../../src/server/env';

function problem(env: Record<string, string>): string {
  try {
    loadEnv(env);
  } catch (e) {
    return (e as Error).message;
  }
  return 'no error';
}

describe('server environment', () => {
  it('has the defaults of DESIGN.md §6 with nothing set', () => {
    const env = loadEnv({});
    expect(env).toMatchObject({
      PORT: 8080,
      PROXY_PATH: '/',
      ROLE: 'all',
      LOG_LEVEL: 'info',
      BODY_LIMIT_BYTES: 10 * 1024 * 1024,
      REQUEST_TIMEOUT_MS: 300_000,
      HEARTBEAT_INTERVAL_MS: 15_000,
    });
    expect(env.REDIS_URL).toBeUndefined();
    expect(env.PROXY_PASSWORD).toBeUndefined();
    // /metrics stays on PORT unless a separate port is asked for.
    expect(env.METRICS_PORT).toBeUndefined();
    expect(loadEnv({ METRICS_PORT: '9090' }).METRICS_PORT).toBe(9090);
    expect(env.MATCHING_THREADS).toBeUndefined();
    expect(loadEnv({ MATCHING_THREADS: '2' }).MATCHING_THREADS).toBe(2);
    // On by default (docs/aggregation.md, "Partitions"); false gives back the usual matcher.
    expect(env.MATCHING_PARTITIONS).toBe(true);
    expect(loadEnv({ MATCHING_PARTITIONS: 'false' }).MATCHING_PARTITIONS).toBe(false);
  });

  it.each([
    [{ PORT: 'eighty' }, /PORT must be a whole number/],
    [{ PORT: '70000' }, /PORT must be between 0 and 65535/],
    [{ ROLE: 'both' }, /ROLE must be one of all, api, worker/],
    [{ LOG_LEVEL: 'trace' }, /LOG_LEVEL must be one of error, warn, info, debug/],
    [{ PROXY_PATH: 'proxy' }, /PROXY_PATH must be an absolute URL path/],
    [{ REDIS_URL: 'http://x' }, /REDIS_URL must start with redis:\/\//],
    [{ BODY_LIMIT_BYTES: '-1' }, /BODY_LIMIT_BYTES must be a whole number/],
    [{ HEARTBEAT_INTERVAL_MS: '60000' }, /HEARTBEAT_INTERVAL_MS must be between 10 and 30000/],
    [{ REDIS_URL: 'redis://localhost:6379' }, /PROXY_PASSWORD is required for the api in queue mode/],
    [{ ROLE: 'worker' }, /REDIS_URL is required when ROLE=worker/],
    [{ ROLE: 'worker', REDIS_URL: 'redis://r:6379' }, /JOB_ENCRYPTION_KEY \(or PROXY_PASSWORD\) is required/],
    [{ METRICS_ENABLED: 'maybe' }, /METRICS_ENABLED must be true or false/],
    [{ JOB_ENCRYPTION_KEY: 'short' }, /JOB_ENCRYPTION_KEY must be 32 bytes/],
    [{ JOB_ENCRYPTION_KEY: 'a'.repeat(63) }, /JOB_ENCRYPTION_KEY must be 32 bytes/],
    [{ METRICS_PORT: 'metrics' }, /METRICS_PORT must be a whole number/],
    [{ MATCHING_THREADS: '0' }, /MATCHING_THREADS must be between 1 and 256/],
    [{ MATCHING_PARTITIONS: 'on' }, /MATCHING_PARTITIONS must be true or false/],
    [{ METRICS_PORT: '-1' }, /METRICS_PORT must be a whole number/],
    [{ METRICS_PORT: '65536' }, /METRICS_PORT must be between 0 and 65535/],
    [{ TRUST_PROXY: 'the ingress' }, /TRUST_PROXY must be true, false, a number of proxy hops/],
    [{ WORKER_LOCK_MS: '1000' }, /WORKER_LOCK_MS must be between 5000 and 3600000/],
    [{ WORKER_STALLED_INTERVAL_MS: 'often' }, /WORKER_STALLED_INTERVAL_MS must be a whole number/],
  ])('refuses %j naming the variable', (env, message) => {
    expect(problem(env)).toMatch(message);
  });

  it('never echoes a value it rejects', () => {
    expect(problem({ REDIS_URL: 'redis://:hunter2-secret@' + 'x'.repeat(3) + ':notaport' })).not.toContain('hunter2');
  });

  it('reads TRUST_PROXY as a boolean, a hop count or a list of proxy addresses', () => {
    expect(loadEnv({}).TRUST_PROXY).toBe(false);
    expect(loadEnv({ TRUST_PROXY: 'true' }).TRUST_PROXY).toBe(true);
    expect(loadEnv({ TRUST_PROXY: '2' }).TRUST_PROXY).toBe(2);
    expect(loadEnv({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1' }).TRUST_PROXY).toBe('10.0.0.0/8, 127.0.0.1');
  });

  it('settles how soon a dead worker is noticed: WORKER_LOCK_MS 30 s and WORKER_STALLED_INTERVAL_MS 10 s by default', () => {
    expect(loadEnv({})).toMatchObject({ WORKER_LOCK_MS: 30_000, WORKER_STALLED_INTERVAL_MS: 10_000 });
    expect(loadEnv({ WORKER_LOCK_MS: '8000', WORKER_STALLED_INTERVAL_MS: '2000' })).toMatchObject({
      WORKER_LOCK_MS: 8000,
      WORKER_STALLED_INTERVAL_MS: 2000,
    });
  });

  it('accepts a worker with a job key and no password', () => {
    const env = loadEnv({ ROLE: 'worker', REDIS_URL: 'redis://r:6379', JOB_ENCRYPTION_KEY: 'a'.repeat(64) });
    expect(env.ROLE).toBe('worker');
  });
});
