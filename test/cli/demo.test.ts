import { run } from '../../src/cli/demo';
import { scaled } from '../support/time-factor';

/** The README's main job, at a small size: simulator + embedded proxy server + aggregation through the proxy client. */
describe('fusion-proxy demo', () => {
  it(
    'aggregates a generated tenant through the embedded proxy and prints a summary that adds up',
    async () => {
      const out: string[] = [];
      const err: string[] = [];
      const stdout = jest
        .spyOn(process.stdout, 'write')
        .mockImplementation((chunk: string | Uint8Array) => (out.push(String(chunk)), true));
      const stderr = jest
        .spyOn(process.stderr, 'write')
        .mockImplementation((chunk: string | Uint8Array) => (err.push(String(chunk)), true));
      let code: number;
      try {
        code = await run(['--identities', '300', '--per-source', '150', '--seed', '7']);
      } finally {
        stdout.mockRestore();
        stderr.mockRestore();
      }
      const text = out.join('');
      expect(code).toBe(0);
      // The warning's text, not only its count.
      expect(text).toMatch(/Test connection: success: .*5 sources visible.* Warning: Source "Legacy" is disabled/);
      const num = (re: RegExp): number => Number(re.exec(text)?.[1] ?? NaN);
      const perSource = [...text.matchAll(/(Contractors|LDAP) (\d+)/g)].map((m) => Number(m[2]));
      expect(perSource).toEqual([150, 150]);
      expect(num(/\((\d+) accounts read\)/)).toBe(300);
      const machines = num(/machine accounts skipped:\s+(\d+)/);
      const sent = num(/accounts sent to the platform:\s+(\d+)/);
      const created = num(/\((\d+) new connector accounts;/);
      const platformCreated = num(/the platform created (\d+) accounts/);
      const identities = num(/and (\d+) identities\)/);
      const waiting = num(/potential duplicates:\s+(\d+)/);
      const enabled = num(/accounts enabled by the plan:\s+(\d+)/);
      // Every non-machine account either became a connector account or waits for review.
      expect(created + waiting).toBe(300 - machines);
      // A first run: everything sent is new, and the platform (the simulator, over HTTP) created it all.
      expect(sent).toBe(created);
      expect(platformCreated).toBe(created);
      expect(identities).toBe(created);
      expect(enabled).toBe(created);
      const [, found, planted] = /\((\d+) of (\d+) planted duplicates/.exec(text) ?? [];
      expect(Number(planted)).toBeGreaterThan(0);
      expect(Number(found)).toBe(Number(planted));
      // The flagged accounts that were not planted are explained as namesakes, with the right number.
      const others = waiting - Number(found);
      if (others === 1) expect(text).toContain('the other account shares a name and department');
      else if (others > 1) expect(text).toContain(`the other ${others} accounts share a name and department`);
      if (others > 0) expect(text).toContain('different people with the same name (namesakes)');
      else expect(text).not.toContain('namesakes');
      expect(text).toMatch(/Legacy/);
      expect(num(/review forms:\s+(\d+) created/)).toBe(waiting);
      // Counts read as English: no "1 items", no "(s)".
      expect(text).not.toMatch(/\b1 (items|accounts|identities|notifications)\b|\(s\)/);
      expect(err.join('')).not.toMatch(/\b1 items\b/);
      // A hang guard, not a speed requirement: on a loaded 2-core machine this run took 50 s.
    },
    scaled(180_000),
  );

  it.each([
    [['--identities', 'many'], /--identities needs a whole number of at least 1, got "many"/],
    [['--rps', '0'], /--rps needs a whole number of at least 1, got "0"/],
    [['--fast'], /Unknown option '--fast'/],
    [['--seed'], /--seed <value>' argument missing/],
    [['extra'], /Unexpected argument 'extra'/],
  ])('rejects a bad command line %j with its reason, usage and exit code 2', async (argv, reason) => {
    const err: string[] = [];
    const stderr = jest
      .spyOn(process.stderr, 'write')
      .mockImplementation((chunk: string | Uint8Array) => (err.push(String(chunk)), true));
    try {
      expect(await run(argv)).toBe(2);
    } finally {
      stderr.mockRestore();
    }
    expect(err.join('')).toMatch(reason);
    expect(err.join('')).toContain('usage: fusion-proxy demo');
  });
});
