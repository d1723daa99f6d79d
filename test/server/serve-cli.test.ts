import { run } from '../../src/cli/serve';
import { scaled } from '../support/time-factor';

/** Runs `fusion-proxy serve` in this process with a given environment, capturing stderr. */
async function withEnv<T>(env: Record<string, string | undefined>, fn: (stderr: string[]) => Promise<T>): Promise<T> {
  const saved = { ...process.env };
  const stderr: string[] = [];
  const spy = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stderr.push(String(chunk));
    return true;
  });
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  try {
    return await fn(stderr);
  } finally {
    spy.mockRestore();
    process.env = saved;
  }
}

describe('fusion-proxy serve', () => {
  it('refuses to start on an invalid environment and names the variable', async () => {
    await withEnv({ PORT: 'abc', REDIS_URL: undefined }, async (stderr) => {
      expect(await run([])).toBe(78);
      expect(stderr.join('')).toMatch(/PORT must be a whole number/);
    });
  });

  it('refuses queue mode without PROXY_PASSWORD (no generated password in a deployment)', async () => {
    await withEnv({ REDIS_URL: 'redis://127.0.0.1:1', PROXY_PASSWORD: undefined, ROLE: 'all' }, async (stderr) => {
      expect(await run([])).toBe(78);
      expect(stderr.join('')).toMatch(/PROXY_PASSWORD is required/);
    });
  });

  // LOG_LEVEL unset is what a fresh clone has (info); 'error' is the quiet case.
  it.each([[undefined], ['error']])(
    'starts in embedded mode with a generated password on a fresh clone, and stops on SIGTERM (LOG_LEVEL %s)',
    async (logLevel) => {
      await withEnv(
        { REDIS_URL: undefined, PROXY_PASSWORD: undefined, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: logLevel },
        async (stderr) => {
          const listenersBefore = process.listenerCount('SIGTERM');
          const sigintBefore = process.listenerCount('SIGINT');
          const running = run([]);
          const deadline = Date.now() + scaled(5000);
          while (!stderr.join('').includes('generated password') && Date.now() < deadline)
            await new Promise((r) => setTimeout(r, 20));
          expect(stderr.join('')).toMatch(
            /WARNING: PROXY_PASSWORD is not set[\s\S]*generated password:\n\n {4}\S{20,}\n/,
          );
          while (process.listenerCount('SIGTERM') === listenersBefore && Date.now() < deadline)
            await new Promise((r) => setTimeout(r, 20));
          process.emit('SIGTERM');
          expect(await running).toBe(0);
          // Stopped once, it leaves no listener behind (one left held the closed server).
          expect([process.listenerCount('SIGTERM'), process.listenerCount('SIGINT')]).toEqual([
            listenersBefore,
            sigintBefore,
          ]);
        },
      );
    },
  );
});
