import net from 'node:net';
import { Redis } from 'ioredis';
import { RedisHealth, redisCause, shownRedisUrl } from '../../src/queue/redis-health';
import type { Logger } from '../../src/core/ports/logger';

interface Line {
  level: string;
  fields: Record<string, unknown>;
  msg: string;
}

function recorder(): { logger: Logger; lines: Line[] } {
  const lines: Line[] = [];
  const at =
    (level: string) =>
    (fields: Record<string, unknown> | string, msg?: string): void =>
      void lines.push(
        typeof fields === 'string' ? { level, fields: {}, msg: fields } : { level, fields, msg: msg ?? '' },
      );
  return { logger: { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug') } as Logger, lines };
}

async function closedPort(): Promise<number> {
  return new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
}

describe('RedisHealth: Redis trouble named once, then calmly', () => {
  it('a real connection refused again and again: one line naming REDIS_URL and the cause, no password', async () => {
    const port = await closedPort();
    const url = `redis://fusion:s3cret-redis-pw@127.0.0.1:${port}/2`;
    const { logger, lines } = recorder();
    const health = new RedisHealth(url, logger);
    const redis = new Redis(url, { retryStrategy: () => 20, maxRetriesPerRequest: 0, lazyConnect: true });
    let errors = 0;
    const tenErrors = new Promise<void>((resolve) =>
      redis.on('error', () => {
        if (++errors === 10) resolve();
      }),
    );
    health.watch(redis);
    redis.connect().catch(() => undefined);
    await tenErrors;
    redis.disconnect();
    expect(lines).toHaveLength(1);
    expect(lines[0]!.level).toBe('error');
    expect(lines[0]!.msg).toBe(
      `Redis at redis://127.0.0.1:${port}/2 (REDIS_URL) cannot be used: connection refused (ECONNREFUSED). Retrying; commands are answered 503 QUEUE_UNAVAILABLE until it is back.`,
    );
    expect(JSON.stringify(lines)).not.toContain('s3cret-redis-pw');
    expect(health.describe('fallback')).toBe(
      `Redis at redis://127.0.0.1:${port}/2 (REDIS_URL): connection refused (ECONNREFUSED)`,
    );
  });

  it('reminds once per interval while down, says when the cause changes, and logs the recovery', () => {
    let now = 0;
    const { logger, lines } = recorder();
    const health = new RedisHealth('redis://r:6379', logger, { reminderMs: 60_000, now: () => now });
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    for (; now < 59_000; now += 500) health.failed(refused);
    expect(lines).toHaveLength(1);
    now = 60_000;
    health.failed(refused);
    expect(lines).toHaveLength(2);
    expect(lines[1]!.msg).toBe(
      'Redis at redis://r:6379 (REDIS_URL) still cannot be used: connection refused (ECONNREFUSED) (for 60 s, 119 failed attempts)',
    );
    now = 61_000;
    health.failed(new Error('WRONGPASS invalid username-password pair or user is disabled.'));
    expect(lines[2]!.msg).toContain('now fails with: authentication failed: check REDIS_USERNAME and REDIS_PASSWORD');
    now = 75_000;
    health.recovered();
    expect(lines[3]).toMatchObject({
      level: 'info',
      msg: 'Redis at redis://r:6379 (REDIS_URL) is reachable again after 75 s',
    });
    health.recovered();
    expect(lines).toHaveLength(4);
    health.failed(refused);
    expect(lines[4]!.msg).toContain('cannot be used: connection refused');
    // Closing: errors of our own disconnects are not reported.
    health.recovered();
    health.stop();
    health.failed(new Error("Stream isn't writeable and enableOfflineQueue options is false"));
    expect(lines).toHaveLength(6);
  });

  it('a connection reset, then refused (Redis killed): one line at once, the real cause in readiness and the reminder', () => {
    let now = 0;
    const { logger, lines } = recorder();
    const health = new RedisHealth('redis://r:6379', logger, { reminderMs: 60_000, now: () => now });
    const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    health.failed(reset);
    health.failed(new Error('Connection is closed.'));
    for (now = 100; now < 59_000; now += 500) health.failed(refused);
    expect(lines.map((l) => l.msg)).toEqual([
      'Redis at redis://r:6379 (REDIS_URL) cannot be used: connection reset (ECONNRESET). Retrying; commands are answered 503 QUEUE_UNAVAILABLE until it is back.',
    ]);
    expect(health.describe('fallback')).toBe('Redis at redis://r:6379 (REDIS_URL): connection refused (ECONNREFUSED)');
    now = 60_000;
    health.failed(refused);
    expect(lines[1]!.msg).toMatch(/now fails with: connection refused \(ECONNREFUSED\) \(for 60 s/);
    // Flapping between a reset and refusal is the same outage: no line until the next reminder.
    now = 61_000;
    health.failed(reset);
    health.failed(refused);
    expect(lines).toHaveLength(2);
  });

  it('names causes an operator can act on, and never shows credentials', () => {
    expect(redisCause(Object.assign(new Error('x'), { code: 'ENOTFOUND' }))).toBe('no such host (DNS, ENOTFOUND)');
    expect(redisCause(Object.assign(new Error('x'), { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' }))).toMatch(
      /^TLS handshake failed/,
    );
    expect(redisCause(new Error('NOAUTH Authentication required.'))).toMatch(/^authentication failed/);
    expect(shownRedisUrl('rediss://user:pw@redis.example:6380')).toBe('rediss://redis.example:6380');
    expect(shownRedisUrl('not a url')).toBe('REDIS_URL');
  });
});
