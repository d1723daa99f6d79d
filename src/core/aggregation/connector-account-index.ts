import type { PlatformAccount } from '../ports/platform';
import { ACCOUNTS_ATTRIBUTE, stringList } from './connector-account';
import { ExistingAccount, type ExistingAccountState, type ExistingAccountStore } from './existing-account';
import { IdPool } from './id-pool';
import { NONE, NumberColumn } from './number-column';
import { RecordPacker, type Packed } from './packed-account';
import { leaveOutRepeated } from './repeated-attributes';

export { ExistingAccount } from './existing-account';

/**
 * The connector accounts of the source, indexed by key, by source account and by identity: which
 * connector account a source account belongs to. Rebuilt from the platform on every run; every
 * connector account is held from then until its source accounts are read (a later run at 1M
 * identities: about 1M at once). So its ids are numbered in id pools (16 bytes for a hex id or
 * UUID instead of a 48-56 byte string), the maps between them are typed arrays of numbers, and an
 * account no source account has reached yet is three columns (its packed attributes, its flags, its
 * contributor) instead of an object: it becomes an ExistingAccount when first reached.
 */
export class ConnectorAccountIndex {
  private readonly store: ExistingAccountStore = { packer: new RecordPacker(), keys: new IdPool(), ids: new IdPool() };
  private readonly identities = new IdPool();
  /** By key number, while not yet reached: packed attributes (undefined once reached or released). */
  private packedBySlot: (Packed<Record<string, unknown>> | undefined)[] = [];
  private readonly flagsBySlot = new NumberColumn();
  /** By key number, while not yet reached: its one contributor's number (NONE: see `manyBySlot`). */
  private readonly singleBySlot = new NumberColumn();
  /** By key number, while not yet reached: contributor numbers of accounts with other than one. */
  private readonly manyBySlot = new Map<number, number[]>();
  /** Accounts reached and still waiting, by key number. */
  private readonly reached = new Map<number, ExistingAccount>();
  /** Source account id number -> key number of the connector account it belongs to. */
  private readonly owner = new NumberColumn();
  /** Identity id number -> key number of the connector account correlated with it. */
  private readonly byIdentity = new NumberColumn();

  add(account: PlatformAccount): void {
    const { keys, ids, packer } = this.store;
    const slot = keys.add(account.nativeIdentity);
    const contributors = stringList(account.attributes[ACCOUNTS_ATTRIBUTE]);
    const trimmed = leaveOutRepeated(account.attributes, account.nativeIdentity, contributors);
    const numbers = contributors.map((id) => ids.add(id));
    this.reached.delete(slot);
    this.packedBySlot[slot] = packer.pack(trimmed.attributes);
    this.flagsBySlot.set(slot, (account.disabled ? 1 : 0) | (trimmed.left << 1));
    this.singleBySlot.set(slot, numbers.length === 1 ? numbers[0]! : NONE);
    if (numbers.length === 1) this.manyBySlot.delete(slot);
    else this.manyBySlot.set(slot, numbers);
    for (const n of numbers) this.owner.set(n, slot);
    if (account.identityId) this.byIdentity.set(this.identities.add(account.identityId), slot);
  }

  /** Key of the connector account a source account belongs to (by its id, else by its identity). */
  keyOf(account: PlatformAccount): string | undefined {
    let slot = this.owner.get(this.store.ids.find(account.id));
    if (slot === NONE && account.identityId) slot = this.byIdentity.get(this.identities.find(account.identityId));
    return slot === NONE ? undefined : this.store.keys.id(slot);
  }

  /** A connector account still waiting for source accounts. */
  waiting(key: string): ExistingAccount | undefined {
    const slot = this.store.keys.find(key);
    return slot === NONE ? undefined : this.reach(slot);
  }

  /** Records a source account read; returns the connector account once all of its sources were read. */
  see(existing: ExistingAccount, account: PlatformAccount): ExistingAccount | undefined {
    if (!existing.addSeen(account)) return undefined;
    this.reached.delete(existing.slot);
    return existing;
  }

  /**
   * The connector account a review decision names: `account` names a source account of a
   * connector account, or (for an account created earlier in the run that found the duplicate)
   * that connector account's key itself; `identity` names the identity it is correlated with.
   */
  target(identityId: string, candidateKind: 'identity' | 'account'): ExistingAccount | undefined {
    const own = this.store.keys.find(identityId);
    const byKey = own !== NONE && this.isWaiting(own) ? own : NONE;
    const named =
      candidateKind === 'account'
        ? this.owner.get(this.store.ids.find(identityId))
        : this.byIdentity.get(this.identities.find(identityId));
    const slot = named !== NONE ? named : byKey;
    // An empty key names no account (as a lookup by key string treated it).
    return slot === NONE || this.store.keys.id(slot) === '' ? undefined : this.reach(slot);
  }

  /** A review decision joins a source account to a connector account: it waits for it too. */
  link(accountId: string, target: ExistingAccount): void {
    const n = this.store.ids.add(accountId);
    target.addContributor(n);
    this.owner.set(n, target.slot);
  }

  /** Connector accounts whose source accounts did not all appear; the index is empty afterwards. */
  drainUnfinished(): ExistingAccount[] {
    const rest: ExistingAccount[] = [];
    for (let slot = 0; slot < this.store.keys.size; slot++) {
      const e = this.reach(slot);
      if (e) rest.push(e);
    }
    this.reached.clear();
    return rest;
  }

  private isWaiting(slot: number): boolean {
    return this.reached.has(slot) || this.packedBySlot[slot] !== undefined;
  }

  /** The waiting account numbered `slot` as an object (made from its columns when first reached). */
  private reach(slot: number): ExistingAccount | undefined {
    const known = this.reached.get(slot);
    if (known) return known;
    const packedAttributes = this.packedBySlot[slot];
    if (packedAttributes === undefined) return undefined;
    const single = this.singleBySlot.get(slot);
    const state: ExistingAccountState = {
      flags: this.flagsBySlot.get(slot),
      packedAttributes,
      numbers: single !== NONE ? single : (this.manyBySlot.get(slot) ?? []),
    };
    this.packedBySlot[slot] = undefined;
    this.manyBySlot.delete(slot);
    const e = new ExistingAccount(this.store, slot, state);
    this.reached.set(slot, e);
    return e;
  }
}
