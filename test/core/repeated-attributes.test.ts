/**
 * An existing connector account packs its attributes without the `id`, `accounts` and `name` that
 * repeat its key, its source account ids and its displayName (src/core/aggregation/repeated-attributes.ts).
 * What it reads back must be what it was given: the same keys in the same order, the same values,
 * whatever the attributes hold (a placeholder-like 0, non-string ids, unicode, a review link).
 */
import { ConnectorAccountIndex } from '../../src/core/aggregation/connector-account-index';
import { leaveOutRepeated, restoreRepeated } from '../../src/core/aggregation/repeated-attributes';
import type { PlatformAccount } from '../../src/core/ports/platform';

function connectorAccount(key: string, attributes: Record<string, unknown>, disabled = false): PlatformAccount {
  return {
    id: `platform-${key}`,
    sourceId: 'own',
    sourceName: 'Fusion',
    nativeIdentity: key,
    name: key,
    disabled,
    isMachine: false,
    attributes,
  };
}

/** Adds it to an index and reads its attributes back (with their keys' order). */
function roundTrip(
  key: string,
  attributes: Record<string, unknown>,
): { back: Record<string, unknown>; keys: string[] } {
  const index = new ConnectorAccountIndex();
  index.add(connectorAccount(key, attributes));
  const back = index.waiting(key)!.attributes();
  return { back, keys: Object.keys(back) };
}

const key = '8583f7f7-79fd-4d7f-901d-0af5fd2207a0';
const id = '2345dd5bf2f7f16d6df8adfa5e2e4bb8';

describe('repeated attributes of a connector account', () => {
  it('leaves out id, accounts and name when they repeat the key, the ids and displayName, and puts them back in place', () => {
    const attributes = { uid: 'r.s', displayName: 'Richard Stewart', id: key, name: 'Richard Stewart', accounts: [id] };
    const trimmed = leaveOutRepeated(attributes, key, [id]);
    expect(trimmed.left).not.toBe(0);
    expect(JSON.stringify(trimmed.attributes)).not.toContain(key);
    expect(JSON.stringify(trimmed.attributes)).not.toContain(id);
    expect(Object.keys(trimmed.attributes)).toEqual(Object.keys(attributes));
    expect(attributes.id).toBe(key); // the caller's object is left as it was
    const back = restoreRepeated({ ...trimmed.attributes }, trimmed.left, key, [id]);
    expect(back).toStrictEqual(attributes);
    expect(Object.keys(back)).toEqual(Object.keys(attributes));
  });

  it('keeps what does not repeat exactly: another key, other ids, ids in another order, a name unlike displayName', () => {
    const cases: Record<string, unknown>[] = [
      { id: 'another-key', accounts: [id], name: 'Rick', displayName: 'Richard' },
      { id: key.toUpperCase(), accounts: ['b', id], name: 'X' },
      { accounts: [id, 7], name: 7, displayName: 7 },
      { accounts: id, name: '', displayName: undefined },
      { id: 0, accounts: 0, name: 0, displayName: 0 },
    ];
    for (const attributes of cases) {
      const trimmed = leaveOutRepeated(attributes, key, [id, 'b']);
      expect(trimmed.left).toBe(0);
      expect(trimmed.attributes).toBe(attributes);
      expect(roundTrip(key, attributes).back).toEqual(JSON.parse(JSON.stringify(attributes)));
    }
  });

  it('reads back values of every kind and unicode, with a 0 that is a value next to the placeholders', () => {
    const attributes = {
      zero: 0,
      id: 'clé-ü-中',
      accounts: ['ü', '中文', 'non-hex id with spaces'],
      displayName: 'Zoë "Ž" \\ \n',
      name: 'Zoë "Ž" \\ \n',
      nested: { id: 'clé-ü-中', list: [0, null, false] },
    };
    const index = new ConnectorAccountIndex();
    index.add(connectorAccount('clé-ü-中', attributes, true));
    const e = index.waiting('clé-ü-中')!;
    expect(e.disabled).toBe(true);
    expect(e.contributors).toEqual(attributes.accounts);
    expect(e.attributes()).toStrictEqual(attributes);
    expect(Object.keys(e.attributes())).toEqual(Object.keys(attributes));
  });

  it('a missing displayName or name is not invented; absent id and accounts stay absent', () => {
    expect(roundTrip(key, { name: 'N' }).back).toStrictEqual({ name: 'N' });
    expect(roundTrip(key, { displayName: 'N' }).back).toStrictEqual({ displayName: 'N' });
    expect(roundTrip(key, {}).back).toStrictEqual({});
  });

  it('each read is a fresh copy: changing the accounts read does not change the contributors or the next read', () => {
    const attributes = { id: key, accounts: [id, 'b'] };
    const index = new ConnectorAccountIndex();
    index.add(connectorAccount(key, attributes));
    const e = index.waiting(key)!;
    (e.attributes().accounts as string[]).push('changed');
    e.contributors.push('changed');
    expect(e.attributes()).toStrictEqual(attributes);
    expect(e.contributors).toEqual([id, 'b']);
  });

  it('a review link adds a contributor: the stored accounts stay as read, the account waits for the new one', () => {
    const attributes = { id: key, name: 'Ann', displayName: 'Ann', accounts: [id] };
    const index = new ConnectorAccountIndex();
    index.add(connectorAccount(key, attributes));
    const e = index.waiting(key)!;
    index.link('linked', e);
    index.link('linked', e);
    expect(e.contributors).toEqual([id, 'linked']);
    expect(e.attributes()).toStrictEqual(attributes);
    expect(Object.keys(e.attributes())).toEqual(Object.keys(attributes));
    const source = (sid: string): PlatformAccount => ({ ...connectorAccount(sid, {}), id: sid });
    expect(index.see(e, source(id))).toBeUndefined();
    expect(index.see(e, source('linked'))).toBe(e);
  });
});
