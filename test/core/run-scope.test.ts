import { ConnectorAccountIndex } from '../../src/core/aggregation/connector-account-index';
import { RunScope } from '../../src/core/aggregation/run-scope';
import type { PlatformAccount } from '../../src/core/ports/platform';

const plain = { aggregationBatchSize: 0, accountFilter: '', sourceOptions: {} };
const both = { read: ['HR', 'AD'], skipped: [] };

describe('RunScope: the one rule for a full run', () => {
  it('every configured source read, no limit, no filter: full; may reset and discard forms', () => {
    const scope = new RunScope(plain, both);
    expect(scope.full).toBe(true);
    expect(scope.mayReset(true)).toBe(true);
    expect(scope.mayReset(false)).toBe(false);
    expect(scope.mayDiscardForms).toBe(true);
    expect(scope.whyLimited()).toBeUndefined();
  });

  it.each([
    ['a disabled source', plain, { read: ['HR'], skipped: ['AD'] }, /source\(s\) AD are disabled/],
    ['Aggregation batch size', { ...plain, aggregationBatchSize: 100 }, both, /Aggregation batch size/],
    ['a global account filter', { ...plain, accountFilter: 'department eq "IT"' }, both, /account filter/],
    [
      'a per-source account filter',
      { ...plain, sourceOptions: { AD: { forceAggregation: false, accountFilter: 'x eq 1' } } },
      both,
      /account filter/,
    ],
  ])('%s: not full; a requested reset waits and no form is discarded', (_name, config, sources, why) => {
    const scope = new RunScope(config, sources);
    expect(scope.full).toBe(false);
    expect(scope.mayReset(true)).toBe(false);
    expect(scope.mayDiscardForms).toBe(false);
    expect(scope.whyLimited()).toMatch(why);
  });

  it('the probabilistic estimate: a run that reads every account it can, so a disabled source does not stop it', () => {
    expect(new RunScope(plain, both).estimatesModel).toBe(true);
    expect(new RunScope(plain, { read: ['HR'], skipped: ['AD'] }).estimatesModel).toBe(true);
    expect(new RunScope({ ...plain, aggregationBatchSize: 100 }, both).estimatesModel).toBe(false);
    expect(new RunScope({ ...plain, accountFilter: 'department eq "IT"' }, both).estimatesModel).toBe(false);
    const perSource = { ...plain, sourceOptions: { AD: { forceAggregation: false, accountFilter: 'x eq 1' } } };
    expect(new RunScope(perSource, both).estimatesModel).toBe(false);
  });

  it('a blank filter is no filter, and the limit is reported', () => {
    expect(new RunScope({ ...plain, accountFilter: '   ' }, both).full).toBe(true);
    expect(new RunScope({ ...plain, aggregationBatchSize: 7 }, both).limitedTo).toBe(7);
    expect(new RunScope(plain, both).limitedTo).toBeUndefined();
  });
});

function account(id: string, patch: Partial<PlatformAccount> = {}): PlatformAccount {
  return {
    id,
    nativeIdentity: id,
    name: id,
    sourceId: 's',
    sourceName: 'HR',
    disabled: false,
    attributes: {},
    ...patch,
  } as PlatformAccount;
}

describe('ConnectorAccountIndex', () => {
  it('finds a connector account by source account or identity, and releases it once all its sources were read', () => {
    const index = new ConnectorAccountIndex();
    index.add(account('key-1', { identityId: 'id-1', attributes: { accounts: ['a', 'b'] } }));
    const a = account('a');
    const viaIdentity = account('c', { identityId: 'id-1' });
    expect(index.keyOf(a)).toBe('key-1');
    expect(index.keyOf(viaIdentity)).toBe('key-1');
    expect(index.keyOf(account('z'))).toBeUndefined();
    const waiting = index.waiting('key-1');
    expect(waiting).toBeDefined();
    expect(index.see(waiting!, a)).toBeUndefined();
    expect(index.see(waiting!, account('b'))).toBe(waiting);
    expect(index.waiting('key-1')).toBeUndefined();
    expect(index.drainUnfinished()).toEqual([]);
  });

  it('a review link makes the connector account wait for one more source account', () => {
    const index = new ConnectorAccountIndex();
    index.add(account('key-1', { identityId: 'id-1', attributes: { accounts: ['a'] } }));
    const target = index.target('id-1', 'identity');
    expect(target?.key).toBe('key-1');
    expect(index.target('a', 'account')).toBe(target);
    expect(index.target('key-1', 'account')).toBe(target);
    expect(index.target('nobody', 'identity')).toBeUndefined();
    index.link('new', target!);
    index.link('new', target!);
    expect(target!.contributors).toEqual(['a', 'new']);
    expect(index.keyOf(account('new'))).toBe('key-1');
    expect(index.see(target!, account('a'))).toBeUndefined();
    expect(index.drainUnfinished()).toEqual([target]);
    expect(index.waiting('key-1')).toBeUndefined();
  });
});
