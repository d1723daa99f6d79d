import axios from 'axios';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger } from '../../src/observability/logger';
import { buildApp } from '../../src/server/app';
import { loadEnv } from '../../src/server/env';

function capture(): { lines: string[]; logger: ReturnType<typeof createLogger> } {
  const lines: string[] = [];
  return { lines, logger: createLogger({ level: 'debug', destination: { write: (s: string) => void lines.push(s) } }) };
}

describe('logger redaction', () => {
  it('an HTTP client error logged in any shape never carries the bearer token or the client credentials', async () => {
    const server = http.createServer((_req, res) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end('{"messages":[{"text":"boom"}]}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    const err = await axios
      .create()
      .post(
        `http://127.0.0.1:${port}/oauth/token`,
        'grant_type=client_credentials&client_id=cid&client_secret=SECRET-XYZ',
        {
          headers: { Authorization: 'Bearer TOKEN-ABC', 'content-type': 'application/x-www-form-urlencoded' },
        },
      )
      .catch((e: unknown) => e);
    await new Promise<void>((r) => server.close(() => r()));
    const { lines, logger } = capture();
    logger.error({ err }, 'platform call failed');
    logger.error({ error: err }, 'platform call failed');
    logger.error({ cause: { err } }, 'nested');
    const text = lines.join('\n');
    expect(lines).toHaveLength(3);
    expect(text).toContain('status');
    expect(text).not.toContain('TOKEN-ABC');
    expect(text).not.toContain('SECRET-XYZ');
  });

  it('request log lines keep the path and drop the query string', async () => {
    const { lines, logger } = capture();
    const app = await buildApp({
      env: loadEnv({ PROXY_PASSWORD: 'p'.repeat(20), LOG_LEVEL: 'debug' }),
      probe: { mode: 'embedded', ready: async () => ({ ok: true }) },
      logger,
    });
    await app.inject({ method: 'GET', url: '/healthz?code=GATEWAY-KEY-123' });
    await app.close();
    const text = lines.join('\n');
    expect(text).toContain('/healthz');
    expect(text).not.toContain('GATEWAY-KEY-123');
  });
});
