/**
 * A client that leaves while the command's first chunk is on its way to the api: the route gets that
 * chunk after the response is already closed. The command must still be closed (queue mode: the
 * cancel key, the job's removal, the reader lease's renewal stopped), not only when the response
 * stream happens to take its first step. CI's loaded run caught a queue-mode job left running with
 * its reader lease renewed forever this way (test/queue/queue-mode.test.ts, "ends before the worker
 * polls").
 */
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { CommandDispatcher, OutputChunk } from '../../src/dispatch/command-dispatcher';
import { createLogger } from '../../src/observability/logger';
import { buildApp } from '../../src/server/app';
import { loadEnv } from '../../src/server/env';
import { until } from '../support/until';
import { PASSWORD, commandBody } from './harness';

/** Yields its one chunk only once the request's signal says the client left. */
class LateFirstChunk implements CommandDispatcher {
  readonly mode = 'embedded' as const;
  started = false;
  closed = false;

  async *dispatch(_cmd: unknown, signal: AbortSignal): AsyncGenerator<OutputChunk> {
    this.started = true;
    try {
      if (!signal.aborted) await new Promise<void>((r) => signal.addEventListener('abort', () => r(), { once: true }));
      yield { data: '{"i":0}\n', items: 1 };
    } finally {
      this.closed = true;
    }
  }

  ready = (): Promise<{ ok: true }> => Promise.resolve({ ok: true });
  close = (): Promise<void> => Promise.resolve();
}

describe('a client that leaves before the first chunk reaches the api', () => {
  it('closes the command all the same', async () => {
    const dispatcher = new LateFirstChunk();
    // LOG_LEVEL unset: the default level a server runs at (its request lines are written, to a buffer here).
    const env = loadEnv({ PROXY_PASSWORD: PASSWORD });
    const lines: string[] = [];
    const app = await buildApp({
      env,
      dispatcher,
      logger: createLogger({ level: env.LOG_LEVEL, destination: { write: (l: string) => void lines.push(l) } }),
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const { port } = app.server.address() as AddressInfo;
      const body = JSON.stringify(commandBody());
      const socket = net.connect(port, '127.0.0.1');
      socket.on('error', () => undefined);
      socket.write(
        `POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      await until('the command started', () => dispatcher.started);
      socket.destroy();
      await until('the command closed', () => dispatcher.closed);
      expect(env.LOG_LEVEL).toBe('info');
      expect(lines.join('')).not.toContain(PASSWORD);
    } finally {
      await app.close();
    }
  });
});
