/**
 * #14 item 4, app side: Redis behind TLS signed by a private CA, with an ACL user whose password
 * has characters a URL would have to encode. The chart passes REDIS_URL without credentials,
 * REDIS_USERNAME, REDIS_PASSWORD as is (from a Secret) and REDIS_TLS_CA_FILE (a mounted Secret);
 * the server must reach the queue with exactly that, and refuse a server it cannot verify.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { loadEnv } from '../../src/server/env';
import { redisTarget } from '../../src/server/redis-settings';
import { commandBody, ndjsonItems, post, startHarness, type Harness } from '../server/harness';
import { freePort } from '../support/free-port';
import { redisServerBinary } from '../support/own-redis';
import { scaled } from '../support/time-factor';
import { until } from '../support/until';

/** The limit of each wait for the server below (quiet machine; until() scales it). */
const READY_MS = 20_000;

jest.setTimeout(scaled(60_000));

const USER = 'fusion';
/** What the issue saw KEDA receive URL-encoded (p%40ss): here it must arrive as is everywhere. */
const REDIS_PASSWORD = 'p@ss:w/rd%40#1';

function openssl(args: string[], cwd: string): void {
  const res = spawnSync('openssl', args, { cwd, encoding: 'utf8' });
  if (res.status !== 0) throw new Error(`openssl ${args.join(' ')} failed: ${res.stderr}`);
}

describe('Redis over TLS with a private CA and an ACL user', () => {
  let dir: string;
  let port: number;
  let redis: ChildProcess;
  let url: string;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'fusion-redis-tls-'));
    openssl(
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        'ca.key',
        '-out',
        'ca.pem',
        '-days',
        '2',
        '-subj',
        '/CN=fusion test CA',
      ],
      dir,
    );
    writeFileSync(path.join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
    openssl(
      ['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=localhost'],
      dir,
    );
    openssl(
      [
        'x509',
        '-req',
        '-in',
        'server.csr',
        '-CA',
        'ca.pem',
        '-CAkey',
        'ca.key',
        '-CAcreateserial',
        '-out',
        'server.pem',
        '-days',
        '2',
        '-extfile',
        'san.ext',
      ],
      dir,
    );
    // Another CA, which did not sign the server: trusting it alone must not be enough.
    openssl(
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        'other.key',
        '-out',
        'other.pem',
        '-days',
        '2',
        '-subj',
        '/CN=other CA',
      ],
      dir,
    );
    port = await freePort();
    writeFileSync(
      path.join(dir, 'redis.conf'),
      [
        'port 0',
        `tls-port ${port}`,
        'bind 127.0.0.1',
        `tls-cert-file ${path.join(dir, 'server.pem')}`,
        `tls-key-file ${path.join(dir, 'server.key')}`,
        `tls-ca-cert-file ${path.join(dir, 'ca.pem')}`,
        'tls-auth-clients no',
        'save ""',
        'appendonly no',
        'user default off',
        `user ${USER} on >${REDIS_PASSWORD} ~* &* +@all`,
      ].join('\n'),
    );
    const bin = redisServerBinary();
    if (!bin) throw new Error('redis-server not found');
    redis = spawn(bin, [path.join(dir, 'redis.conf')], { stdio: 'ignore' });
    url = `rediss://127.0.0.1:${port}`;
    const probe = new Redis(url, {
      username: USER,
      password: REDIS_PASSWORD,
      tls: { ca: [readFileSync(path.join(dir, 'ca.pem'), 'utf8')] },
      lazyConnect: true,
      maxRetriesPerRequest: 1,
      retryStrategy: () => null,
    });
    probe.on('error', () => undefined);
    const end = Date.now() + scaled(20_000);
    for (;;) {
      try {
        await probe.connect();
        break;
      } catch {
        if (Date.now() > end) throw new Error('TLS redis did not start');
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    probe.disconnect();
  });
  afterAll(() => {
    redis?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  const env = (extra: Record<string, string>): Record<string, string> => ({
    REDIS_URL: url,
    REDIS_USERNAME: USER,
    REDIS_PASSWORD,
    REDIS_TLS_CA_FILE: path.join(dir, 'ca.pem'),
    ...extra,
  });

  it('a command runs through the queue with REDIS_USERNAME, the password as is and the CA file', async () => {
    const h: Harness = await startHarness('queue', env({}));
    try {
      await until('ready', async () => (await fetch(`${h.base}/readyz`)).status === 200, READY_MS);
      const res = await post(`${h.base}/proxy`, commandBody({ items: 3 }));
      expect(res.status).toBe(200);
      expect(ndjsonItems(res.body)).toHaveLength(3);
      // The test's own connection reaches Redis as the server does (harness: its settings and connector).
      expect(await h.redis!.ping()).toBe('PONG');
      expect(h.logs.join('')).not.toContain(REDIS_PASSWORD);
    } finally {
      await h.close();
    }
  });

  it.each([
    [
      'without the CA (the server certificate cannot be verified)',
      'none',
      REDIS_PASSWORD,
      /self[- ]signed certificate/i,
    ],
    ['with a CA that did not sign it', 'other.pem', REDIS_PASSWORD, /self[- ]signed certificate|unable to verify/i],
    [
      'with the password URL-encoded, as KEDA used to get it',
      'ca.pem',
      encodeURIComponent(REDIS_PASSWORD),
      /WRONGPASS|invalid username-password/,
    ],
  ])('is not ready %s', async (_what, ca, password, cause) => {
    const h = await startHarness(
      'queue',
      env({ REDIS_PASSWORD: password, REDIS_TLS_CA_FILE: ca === 'none' ? '' : path.join(dir, ca) }),
    );
    try {
      // Wait for the refusal itself (logged at debug), not for a duration: then readiness must say no.
      await until('the connection is refused for the expected cause', () => cause.test(h.logs.join('')), READY_MS);
      expect((await fetch(`${h.base}/readyz`)).status).toBe(503);
      const res = await post(`${h.base}/proxy`, commandBody({ items: 1 }));
      expect(res.status).toBe(503);
      expect(JSON.parse(res.body)).toMatchObject({ code: 'QUEUE_UNAVAILABLE' });
      expect(h.logs.join('')).not.toContain(REDIS_PASSWORD);
    } finally {
      await h.close();
    }
  });

  it('refuses at boot, naming the variable: a CA file that is missing or not PEM, a CA without TLS, a password in two places', () => {
    const base = { REDIS_URL: url, PROXY_PASSWORD: 'x'.repeat(20) };
    expect(() => redisTarget(loadEnv({ ...base, REDIS_TLS_CA_FILE: path.join(dir, 'missing.pem') }))).toThrow(
      /REDIS_TLS_CA_FILE cannot be read/,
    );
    expect(() => redisTarget(loadEnv({ ...base, REDIS_TLS_CA_FILE: path.join(dir, 'redis.conf') }))).toThrow(
      /REDIS_TLS_CA_FILE holds no PEM certificate/,
    );
    expect(() => loadEnv({ ...base, REDIS_URL: 'redis://127.0.0.1:6379', REDIS_TLS_CA_FILE: '/ca.pem' })).toThrow(
      /REDIS_TLS_CA_FILE needs a rediss:\/\/ REDIS_URL/,
    );
    expect(() => loadEnv({ ...base, REDIS_TLS_CA_FILE: 'ca.pem' })).toThrow(
      /REDIS_TLS_CA_FILE must be an absolute file path/,
    );
    expect(() => loadEnv({ ...base, REDIS_URL: 'redis://:a@127.0.0.1', REDIS_PASSWORD: 'b' })).toThrow(
      /REDIS_PASSWORD is set and REDIS_URL carries a password too/,
    );
    expect(() => loadEnv({ ...base, REDIS_URL: 'redis://u@127.0.0.1', REDIS_USERNAME: 'v' })).toThrow(
      /REDIS_USERNAME is set and REDIS_URL names a user too/,
    );
    expect(() => loadEnv({ PROXY_PASSWORD: 'x'.repeat(20), REDIS_PASSWORD: 'b' })).toThrow(
      /REDIS_PASSWORD needs REDIS_URL/,
    );
    // The problem names the variable, never the value.
    try {
      loadEnv({ ...base, REDIS_URL: 'redis://:a@127.0.0.1', REDIS_PASSWORD: 'secret-value-xyz' });
    } catch (e) {
      expect((e as Error).message).not.toContain('secret-value-xyz');
    }
  });
});
