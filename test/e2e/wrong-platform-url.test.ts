/**
 * The most likely operator mistake, a wrong Platform API URL, through the real proxy server at its
 * default settings (heartbeat 15 s) with the production runner: every command fails with a JSON
 * error (HTTP 500, before any byte of a 200) that names the URL and the cause, and a cause no
 * retry can fix is tried once.
 */
import type { Redis } from 'ioredis';
import type { CommandType } from '../../src/core/command-types';
import { isFusionError, type FusionError } from '../../src/core/errors';
import { createLogger } from '../../src/observability/logger';
import { proxyItems } from '../../src/proxy-client';
import { createProductionRunner } from '../../src/runtime/production-runner';
import { loadEnv } from '../../src/server/env';
import { startServer, type RunningServer } from '../../src/server/server';
import {
  closedPortUrl,
  generateSelfSignedCert,
  startFakeProxyServer,
  type TestServer,
} from '../support/fake-proxy-server';
import { openRedis, redisUrl, uniquePrefix } from '../support/redis';

type Mode = 'embedded' | 'queue';
const PASSWORD = 'wrong-url-proxy-password-4471';
const CLIENT_SECRET = 'wrong-url-client-secret-8812';

describe.each<Mode>(['embedded', 'queue'])('a wrong Platform API URL (%s mode, default settings)', (mode) => {
  let server: RunningServer;
  let redis: Redis | undefined;
  const others: TestServer[] = [];
  let refused: string;
  let selfSigned: TestServer;
  let plainHttp: TestServer;
  let webPage: TestServer;
  let notFound: TestServer;

  beforeAll(async () => {
    redis = mode === 'queue' ? openRedis() : undefined;
    const runner = createProductionRunner({ ...(redis ? { redis, keyPrefix: `${uniquePrefix('wrong-url')}:` } : {}) });
    // Only what the mode needs: every timing setting stays at its default.
    const env = loadEnv({
      PORT: '0',
      HOST: '127.0.0.1',
      PROXY_PASSWORD: PASSWORD,
      QUEUE_NAME: uniquePrefix('wrong-url-q'),
      METRICS_ENABLED: 'false',
      ...(mode === 'queue' ? { REDIS_URL: redisUrl(), JOB_ENCRYPTION_KEY: 'c'.repeat(64) } : {}),
    });
    server = await startServer(env, {
      runner,
      logger: createLogger({ destination: { write: () => undefined } }),
    });
    refused = (await closedPortUrl()).replace(/\/$/, '');
    selfSigned = await startFakeProxyServer(
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"access_token":"t","expires_in":600}');
      },
      { tls: generateSelfSignedCert() },
    );
    plainHttp = await startFakeProxyServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
    webPage = await startFakeProxyServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html><body>Welcome to our intranet</body></html>');
    });
    notFound = await startFakeProxyServer((_req, res) => {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
    });
    others.push(selfSigned, plainHttp, webPage, notFound);
  });

  afterAll(async () => {
    await server?.close();
    await Promise.all(others.map((s) => s.close()));
    await redis?.quit();
  });

  async function failure(type: CommandType, baseurl: string): Promise<FusionError> {
    const config = {
      proxyEnabled: true,
      proxyPassword: PASSWORD,
      baseurl,
      clientId: 'wrong-url-client',
      clientSecret: CLIENT_SECRET,
      spConnectorInstanceId: 'instance-1',
      sources: ['HR'],
    };
    try {
      for await (const item of proxyItems({ url: `${server.url}/`, password: PASSWORD, type, input: {}, config })) {
        throw new Error(`unexpected item ${JSON.stringify(item)}`);
      }
    } catch (e) {
      if (!isFusionError(e)) throw e;
      // A JSON error, answered before any byte of a 200: the client says which HTTP status it got.
      expect(e.message).toContain('(HTTP 500)');
      expect(e.message).not.toContain(CLIENT_SECRET);
      expect(e.message).not.toContain(PASSWORD);
      return e;
    }
    throw new Error('the command succeeded');
  }

  it('no such host (DNS): PLATFORM_UNREACHABLE naming the URL and the cause', async () => {
    const e = await failure('std:test-connection', 'https://tenant-that-does-not-exist.invalid');
    expect(e.code).toBe('PLATFORM_UNREACHABLE');
    expect(e.message).toContain('https://tenant-that-does-not-exist.invalid');
    expect(e.message).toMatch(/DNS/);
  });

  it('connection refused: one retry, then PLATFORM_UNREACHABLE with the URL, for test connection and aggregation', async () => {
    for (const type of ['std:test-connection', 'std:account:list'] as const) {
      const e = await failure(type, refused);
      expect(e.code).toBe('PLATFORM_UNREACHABLE');
      expect(e.message).toContain(refused);
      expect(e.message).toContain('connection refused');
      expect(e.message).toContain('2 attempt(s)');
    }
  });

  it('a certificate the client does not trust: not retried, the cause is TLS', async () => {
    const before = selfSigned.requests.length;
    const e = await failure('std:test-connection', selfSigned.url.replace(/\/$/, ''));
    expect(e.code).toBe('PLATFORM_UNREACHABLE');
    expect(e.message).toMatch(/TLS certificate not trusted \(DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED/);
    expect(e.message).toContain('1 attempt(s)');
    expect(selfSigned.requests.length).toBe(before); // the handshake failed: no request reached it
  });

  it('https:// to a plain-http port: says so', async () => {
    const e = await failure('std:test-connection', plainHttp.url.replace(/^http:/, 'https:').replace(/\/$/, ''));
    expect(e.code).toBe('PLATFORM_UNREACHABLE');
    expect(e.message).toContain('is it http:// rather than https://?');
    expect(e.message).toContain('1 attempt(s)');
  });

  it('a web page or a 404 where the token endpoint should be: "not the platform API", asked once', async () => {
    for (const s of [webPage, notFound]) {
      const before = s.requests.length;
      const e = await failure('std:test-connection', s.url.replace(/\/$/, ''));
      expect(e.code).toBe('PLATFORM_UNREACHABLE');
      expect(e.message).toContain(`What answers at ${s.url.replace(/\/$/, '')} is not the platform API`);
      expect(s.requests.slice(before).map((r) => `${r.method} ${r.path}`)).toEqual(['POST /oauth/token']);
    }
  });
});
