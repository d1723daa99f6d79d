import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import StandaloneConnector from 'ioredis/built/connectors/StandaloneConnector';
import { ErrorSafeConnector } from '../../src/server/error-safe-connector';
import { redisTarget } from '../../src/server/redis-settings';

/** A socket that fails twice (a TLS handshake with the wrong CA, under load) must not crash the process. */
describe('ErrorSafeConnector', () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    server = createServer((s) => s.on('error', () => undefined));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it("ioredis' own connector lets a second socket error through (what the CA test hit under load)", async () => {
    const c = new StandaloneConnector({ host: '127.0.0.1', port });
    const stream = await c.connect(() => undefined);
    stream.emit('error', new Error('certificate'));
    expect(() => stream.emit('error', new Error('alert 50'))).toThrow('alert 50');
    stream.destroy();
  });

  it('ours keeps the first error for ioredis and absorbs the later ones', async () => {
    const c = new ErrorSafeConnector({ host: '127.0.0.1', port });
    const stream = await c.connect(() => undefined);
    stream.emit('error', new Error('certificate'));
    expect(() => stream.emit('error', new Error('alert 50'))).not.toThrow();
    expect(c.firstError?.message).toBe('certificate');
    stream.destroy();
  });

  it('is what every Redis connection of the process is built with', () => {
    expect(
      redisTarget({
        REDIS_URL: 'redis://127.0.0.1:6379',
        REDIS_USERNAME: undefined,
        REDIS_PASSWORD: undefined,
        REDIS_TLS_CA_FILE: undefined,
      })?.options.Connector,
    ).toBe(ErrorSafeConnector);
  });
});
