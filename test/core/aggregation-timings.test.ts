/**
 * When an aggregation's first item leaves (issue 27: "items leave as they are ready"): with the rules
 * model a batch's accounts go out before the next source page is read; a full probabilistic run holds
 * its new accounts until every source is read (its estimate needs all of them). The summary (and the
 * "Aggregation finished" log line) carries the run's timings, in the order the run reached them.
 */
import { createAccountListCommand } from '../../src/core/commands/account-commands';
import type { PlatformAccount } from '../../src/core/ports/platform';
import { context, harness, type Harness, type LogLine } from './support';

const ACCOUNTS = 120;

function tenant(matching: Record<string, unknown>): { h: Harness; read: () => number } {
  const h = harness({ enableBatching: true, batchSize: 10, matching });
  const hr = h.fake.addSource('Contractors');
  h.fake.addSource('LDAP');
  for (let i = 0; i < ACCOUNTS; i++)
    h.fake.addAccount(hr, `C${i}`, { firstName: `First${i}`, lastName: `Last${i}`, email: `u${i}@acme.example` });
  // Counts the source accounts the run has read so far.
  let served = 0;
  const list = h.fake.listAccounts.bind(h.fake);
  h.fake.listAccounts = async function* (query): AsyncIterable<PlatformAccount> {
    for await (const a of list(query)) {
      served++;
      yield a;
    }
  };
  return { h, read: () => served };
}

async function firstItemAfter(h: Harness, read: () => number, lines: LogLine[]): Promise<number> {
  let readAtFirst = -1;
  for await (const _ of createAccountListCommand(h.deps)({}, h.config, context(lines)))
    if (readAtFirst < 0) readAtFirst = read();
  return readAtFirst;
}

describe('an aggregation sends its items as they are ready', () => {
  test('rules: the first batch leaves before the rest of the source is read; timings in order', async () => {
    const { h, read } = tenant({
      attributes: [{ attribute: 'email', algorithm: 'exact', threshold: 100, mandatory: true }],
    });
    const lines: LogLine[] = [];
    const readAtFirst = await firstItemAfter(h, read, lines);
    expect(read()).toBe(ACCOUNTS);
    expect(readAtFirst).toBeGreaterThan(0);
    expect(readAtFirst).toBeLessThan(ACCOUNTS);
    const t = h.summaries[0]!.timings;
    expect(t.baselineMs).toBeDefined();
    expect(t.firstItemMs).toBeDefined();
    expect(t.baselineMs!).toBeLessThanOrEqual(t.firstItemMs!);
    expect(t.firstItemMs!).toBeLessThanOrEqual(t.sourcesReadMs!);
    const finished = lines.find((l) => l.msg === 'Aggregation finished');
    expect(finished?.fields.timings).toEqual(t);
  });

  test('a full probabilistic run holds its accounts until every source is read (its estimate sees them all)', async () => {
    const { h, read } = tenant({
      model: 'probabilistic',
      attributes: [
        { attribute: 'lastName', algorithm: 'exact', threshold: 100, mandatory: false },
        { attribute: 'email', algorithm: 'exact', threshold: 100, mandatory: false },
      ],
    });
    const readAtFirst = await firstItemAfter(h, read, []);
    expect(readAtFirst).toBe(ACCOUNTS);
    const t = h.summaries[0]!.timings;
    expect(t.sourcesReadMs!).toBeLessThanOrEqual(t.firstItemMs!);
  });

  test('a run that emits nothing has no first-item time', async () => {
    const h = harness({ sources: ['LDAP'] });
    h.fake.addSource('LDAP');
    for await (const _ of createAccountListCommand(h.deps)({}, h.config, context())) void _;
    expect(h.summaries[0]!.timings.firstItemMs).toBeUndefined();
    expect(h.summaries[0]!.timings.sourcesReadMs).toBeDefined();
  });
});
