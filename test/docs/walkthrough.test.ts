/**
 * #28 item 14: the README's five-minute walkthrough, pasted as written into bash, works: each step
 * waits for what it needs (the simulator's file, a ready server), and the servers' JSON logs go to
 * files instead of flooding the terminal. Only the ports are changed (to free ones, so the test
 * can run beside others; the server's default 8080 through PORT) and step 0's `npm ci && npm run
 * build` becomes "build if stale".
 */
import { spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from '../support/free-port';
import { scaled } from '../support/time-factor';

jest.setTimeout(scaled(300_000));

const root = path.resolve(__dirname, '..', '..');

/** The ```sh blocks of the walkthrough, steps 0 to 5. */
function walkthroughBlocks(): string[] {
  const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
  const from = readme.indexOf('## Five-minute walkthrough');
  const to = readme.indexOf('**6. The real platform.**');
  expect(from).toBeGreaterThan(0);
  expect(to).toBeGreaterThan(from);
  return [...readme.slice(from, to).matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

it('the README walkthrough, pasted as written, runs every step to its expected answer', async () => {
  const [api, worker, redis] = [await freePort(), await freePort(), await freePort()];
  const blocks = walkthroughBlocks();
  expect(blocks.length).toBe(6);
  const script = blocks
    .join('\n')
    .replace('npm ci && npm run build', 'node tools/build-if-stale.mjs')
    .replace(/8080/g, String(api))
    .replace(/8081/g, String(worker))
    .replace(/6380/g, String(redis));
  const files = ['fusion.json', 'proxy.log', 'api.log', 'worker.log'].map((f) => path.join(root, f));
  const child = spawn('bash', ['-c', `${script}\necho WALKTHROUGH-DONE`], {
    cwd: root,
    // The server's default port is 8080: moved with the others.
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', PORT: String(api) },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  try {
    await new Promise<void>((resolve) => {
      const check = (): void => {
        if (out.includes('WALKTHROUGH-DONE')) resolve();
      };
      child.stdout.on('data', check);
      child.on('exit', () => resolve());
    });
    const lines = out.split('\n');
    // Step 1: the simulator's one line. Steps 2 and 5: ready (once, then api and worker).
    expect(lines.filter((l) => l.startsWith('{"baseurl":')).length).toBe(1);
    expect(out.match(/"status":"ready"/g)?.length).toBe(3);
    // Step 5 talks to the queue-mode api and worker, not to an embedded server left running.
    expect(out).toContain('{"status":"ready","mode":"queue"}{"status":"ready","mode":"worker"}');
    // Step 3: test connection. Steps 4 and 5: an aggregation each, embedded then through the queue.
    expect(out).toMatch(/"status":"success","message":"Connected to the platform API/);
    const runs = lines.filter((l) => l.startsWith('{"source":"Identity Fusion"'));
    expect(runs.map((l) => (JSON.parse(l) as { state: string }).state)).toEqual(['SUCCESS', 'SUCCESS']);
    // The terminal gets the answers, not the servers' logs.
    expect(lines.filter((l) => l.includes('"level":'))).toEqual([]);
    expect(out).not.toMatch(/ECONNREFUSED|EADDRINUSE/);
    expect(out).toContain('WALKTHROUGH-DONE');
  } finally {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
    // The walkthrough's daemonized redis-server: asked to stop (it is outside the process group).
    const r = new Redis(redis, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    r.on('error', () => undefined);
    await r
      .connect()
      .then(() => r.call('SHUTDOWN', 'NOSAVE'))
      .catch(() => undefined);
    r.disconnect();
    for (const f of files) rmSync(f, { force: true });
  }
});
