import { freePort } from '../support/free-port';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../../src/cli/simulator';
import { fetchToken } from './client';

/** A port nobody listens on right now. */

describe('fusion-proxy simulator CLI', () => {
  it('prints one JSON line, serves the tenant, writes the truth file and stops on abort', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sim-cli-'));
    const truth = join(dir, 'truth.csv');
    const ac = new AbortController();
    let out = '';
    let ready!: () => void;
    const printed = new Promise<void>((r) => (ready = r));
    const port = await freePort();
    const exit = run(
      [
        '--port',
        String(port),
        '--seed',
        '5',
        '--identities',
        '40',
        '--accounts-per-source',
        '30',
        '--duplicates',
        '0.3',
        '--rps-limit',
        '1',
        '--truth',
        truth,
        '--client-id',
        'cli',
        '--client-secret',
        'cli-secret',
      ],
      {
        signal: ac.signal,
        write: (t) => {
          out += t;
          ready();
        },
      },
    );
    try {
      await printed;
      const lines = out.trim().split('\n');
      expect(lines).toHaveLength(1);
      const info = JSON.parse(lines[0] as string) as {
        baseurl: string;
        clientId: string;
        clientSecret: string;
        plantedDuplicates: number;
      };
      expect(info).toMatchObject({ clientId: 'cli', clientSecret: 'cli-secret', identities: 40 });
      const token = await fetchToken(info, info.clientId, info.clientSecret);
      const res = await fetch(`${info.baseurl}/v3/sources?filters=${encodeURIComponent('name eq "HR"')}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { name: string }[])[0]?.name).toBe('HR');
      expect(new URL(info.baseurl).port).toBe(String(port));
      // --rps-limit 1: the request right after the one above is refused, with Retry-After.
      const again = await fetch(`${info.baseurl}/v3/sources?limit=1`, {
        headers: { authorization: `Bearer ${token}` },
      });
      await again.arrayBuffer();
      expect(again.status).toBe(429);
      expect(again.headers.get('retry-after')).toBe('1');
      const csv = readFileSync(truth, 'utf8').trim().split('\n');
      expect(csv[0]).toBe('accountId,candidateId');
      expect(csv.length - 1).toBe(info.plantedDuplicates);
    } finally {
      ac.abort();
      expect(await exit).toBe(0);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('restarted with --config of the file it wrote (to take edits in): same URL and credentials, the file still works', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sim-cli-'));
    const file = join(dir, 'fusion.json');
    const start = async (args: string[]): Promise<{ info: Record<string, unknown>; stop: () => Promise<number> }> => {
      const ac = new AbortController();
      let out = '';
      let ready!: () => void;
      const printed = new Promise<void>((r) => (ready = r));
      const exit = run(args, {
        signal: ac.signal,
        write: (t) => {
          out += t;
          ready();
        },
      });
      await printed;
      return {
        info: JSON.parse(out.trim()) as Record<string, unknown>,
        stop: async () => {
          ac.abort();
          return exit;
        },
      };
    };
    try {
      const first = await start(['--write-config', file]);
      expect(await first.stop()).toBe(0);
      const written = JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>;
      // The operator edits a setting, then restarts the simulator with the file.
      writeFileSync(file, JSON.stringify({ ...written, requestsPerSecond: 5 }));
      const second = await start(['--config', file]);
      try {
        expect(second.info).toMatchObject({
          baseurl: written.baseurl,
          clientId: written.clientId,
          spConnectorInstanceId: written.spConnectorInstanceId,
        });
        const token = await fetchToken(second.info as { baseurl: string }, written.clientId!, written.clientSecret!);
        const res = await fetch(`${written.baseurl}/v3/sources?limit=1`, {
          headers: { authorization: `Bearer ${token}` },
        });
        expect(res.status).toBe(200);
      } finally {
        expect(await second.stop()).toBe(0);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('rejects bad options with exit code 2', async () => {
    const quiet = { write: () => undefined };
    const stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      expect(await run(['--identities', 'many'], quiet)).toBe(2);
      expect(await run(['--duplicates', '1.5'], quiet)).toBe(2);
      expect(await run(['--bogus'], quiet)).toBe(2);
      expect(await run(['--client-id', 'x'], quiet)).toBe(2);
      expect(String(stderr.mock.calls[0]?.[0])).toContain('--identities');
    } finally {
      stderr.mockRestore();
    }
  });
});
