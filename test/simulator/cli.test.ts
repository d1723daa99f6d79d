import { freePort } from '../support/free-port';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
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
