/**
 * The connector account index keeps an account no source account has reached yet in columns
 * (src/core/aggregation/connector-account-index.ts, number-column.ts) and makes it an object when
 * first reached: one object per account from then on, the order of first reading kept, ids of any
 * form, a key read twice (the later account wins, as in a Map).
 */
import { ConnectorAccountIndex } from '../../src/core/aggregation/connector-account-index';
import { NONE, NumberColumn } from '../../src/core/aggregation/number-column';
import type { PlatformAccount } from '../../src/core/ports/platform';

function account(id: string, patch: Partial<PlatformAccount> = {}): PlatformAccount {
  return {
    id,
    sourceId: 's',
    sourceName: 'S',
    nativeIdentity: id,
    name: id,
    disabled: false,
    isMachine: false,
    attributes: {},
    ...patch,
  };
}

const connector = (key: string, accounts: unknown, patch: Partial<PlatformAccount> = {}): PlatformAccount =>
  account(`platform-${key}`, { nativeIdentity: key, attributes: { id: key, accounts }, ...patch });

describe('number column', () => {
  it('reads NONE where nothing was set, grows past its size, and refuses a negative slot', () => {
    const c = new NumberColumn();
    expect(c.get(0)).toBe(NONE);
    expect(c.get(-1)).toBe(NONE);
    c.set(5, 7);
    c.set(100_000, 0);
    expect(c.get(5)).toBe(7);
    expect(c.get(100_000)).toBe(0);
    expect(c.get(99_999)).toBe(NONE);
    expect(c.get(1e9)).toBe(NONE);
    expect(() => c.set(-1, 1)).toThrow(RangeError);
  });
});

describe('connector account index: accounts in columns until reached', () => {
  const a = '0123456789abcdef0123456789abcdef';
  const b = 'fedcba9876543210fedcba9876543210';
  const k1 = '8583f7f7-79fd-4d7f-901d-0af5fd2207a0';

  it('gives one object per account however it is reached, with its state as read', () => {
    const index = new ConnectorAccountIndex();
    index.add(connector(k1, [a], { identityId: 'Identity-1', disabled: true }));
    const e = index.waiting(k1)!;
    expect(index.waiting(k1)).toBe(e);
    expect(index.target('Identity-1', 'identity')).toBe(e);
    expect(index.target(a, 'account')).toBe(e);
    expect(index.target(k1, 'account')).toBe(e);
    expect(e.key).toBe(k1);
    expect(e.disabled).toBe(true);
    expect(e.contributors).toEqual([a]);
    expect(e.attributes()).toStrictEqual({ id: k1, accounts: [a] });
    expect(index.keyOf(account(a))).toBe(k1);
    expect(index.keyOf(account('other', { identityId: 'Identity-1' }))).toBe(k1);
    expect(index.see(e, account(a))).toBe(e);
    expect(index.waiting(k1)).toBeUndefined();
    expect(index.target(k1, 'account')).toBeUndefined();
    // Still known as its account's owner: a source account read again is not taken for a new one.
    expect(index.keyOf(account(a))).toBe(k1);
  });

  it('drains the accounts left, reached or not, in the order first read; none afterwards', () => {
    const index = new ConnectorAccountIndex();
    const keys = ['key-0', k1, 'KEY-2', '', 'clé-中'];
    keys.forEach((k, i) => index.add(connector(k, i === 1 ? [a, b] : i === 4 ? [] : [`src-${i}`])));
    const reached = index.waiting(k1)!;
    expect(index.see(reached, account(b))).toBeUndefined();
    const done = index.waiting('KEY-2')!;
    expect(index.see(done, account('src-2'))).toBe(done);
    const rest = index.drainUnfinished();
    expect(rest.map((e) => e.key)).toEqual(['key-0', k1, '', 'clé-中']);
    expect(rest[1]).toBe(reached);
    expect(rest[1]!.seen().map((s) => s.id)).toEqual([b]);
    expect(rest[3]!.contributors).toEqual([]);
    expect(index.drainUnfinished()).toEqual([]);
    expect(index.waiting('key-0')).toBeUndefined();
  });

  it('an empty key names no account for a review decision; a key read twice keeps the later account at its first place', () => {
    const index = new ConnectorAccountIndex();
    index.add(connector('', ['src-e'], { identityId: 'i-e' }));
    index.add(connector('dup', ['src-1']));
    index.add(connector('after', ['src-3']));
    index.add(connector('dup', ['src-2'], { disabled: true }));
    expect(index.target('i-e', 'identity')).toBeUndefined();
    expect(index.target('src-e', 'account')).toBeUndefined();
    expect(index.waiting('')?.contributors).toEqual(['src-e']);
    const dup = index.waiting('dup')!;
    expect(dup.disabled).toBe(true);
    expect(dup.contributors).toEqual(['src-2']);
    expect(index.keyOf(account('src-1'))).toBe('dup');
    expect(index.drainUnfinished().map((e) => e.key)).toEqual(['', 'dup', 'after']);
  });
});
