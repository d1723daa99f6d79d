import type { PlatformAccount } from '../ports/platform';
import { ACCOUNTS_ATTRIBUTE, stringList } from './connector-account';
import { ExistingAccount, type ExistingAccountStore } from './existing-account';
import { IdPool } from './id-pool';
import { RecordPacker } from './packed-account';

export { ExistingAccount } from './existing-account';

const NONE = -1;

/** Int32 column indexed by id number, NONE where unset, grown on demand. */
class NumberColumn {
  private values = new Int32Array(64).fill(NONE);

  get(n: number): number {
    return n >= 0 && n < this.values.length ? this.values[n]! : NONE;
  }

  set(n: number, value: number): void {
    if (n >= this.values.length) {
      const next = new Int32Array(Math.max(2 * this.values.length, n + 1)).fill(NONE);
      next.set(this.values);
      this.values = next;
    }
    this.values[n] = value;
  }
}

/**
 * The connector accounts of the source, indexed by key, by source account and by identity: which
 * connector account a source account belongs to. Rebuilt from the platform on every run. At 1M
 * connector accounts it holds about 3M ids: they are numbered in id pools (16 bytes for a hex id
 * or UUID instead of a 48-56 byte string) and the maps between them are typed arrays of numbers.
 */
export class ConnectorAccountIndex {
  private readonly store: ExistingAccountStore = { packer: new RecordPacker(), keys: new IdPool(), ids: new IdPool() };
  private readonly identities = new IdPool();
  /** By key number: the connector account while it waits for its source accounts. */
  private waitingBySlot: (ExistingAccount | undefined)[] = [];
  /** Source account id number -> key number of the connector account it belongs to. */
  private readonly owner = new NumberColumn();
  /** Identity id number -> key number of the connector account correlated with it. */
  private readonly byIdentity = new NumberColumn();

  add(account: PlatformAccount): void {
    const slot = this.store.keys.add(account.nativeIdentity);
    const contributors = stringList(account.attributes[ACCOUNTS_ATTRIBUTE]);
    this.waitingBySlot[slot] = new ExistingAccount(this.store, slot, account.disabled, account.attributes, contributors);
    for (const id of contributors) this.owner.set(this.store.ids.add(id), slot);
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
    return slot === NONE ? undefined : this.waitingBySlot[slot];
  }

  /** Records a source account read; returns the connector account once all of its sources were read. */
  see(existing: ExistingAccount, account: PlatformAccount): ExistingAccount | undefined {
    if (!existing.addSeen(account)) return undefined;
    this.waitingBySlot[existing.slot] = undefined;
    return existing;
  }

  /**
   * The connector account a review decision names: `account` names a source account of a
   * connector account, or (for an account created earlier in the run that found the duplicate)
   * that connector account's key itself; `identity` names the identity it is correlated with.
   */
  target(identityId: string, candidateKind: 'identity' | 'account'): ExistingAccount | undefined {
    const own = this.store.keys.find(identityId);
    const byKey = own !== NONE && this.waitingBySlot[own] !== undefined ? own : NONE;
    const named =
      candidateKind === 'account'
        ? this.owner.get(this.store.ids.find(identityId))
        : this.byIdentity.get(this.identities.find(identityId));
    const slot = named !== NONE ? named : byKey;
    // An empty key names no account (as a lookup by key string treated it).
    return slot === NONE || this.store.keys.id(slot) === '' ? undefined : this.waitingBySlot[slot];
  }

  /** A review decision joins a source account to a connector account: it waits for it too. */
  link(accountId: string, target: ExistingAccount): void {
    const n = this.store.ids.add(accountId);
    target.addContributor(n);
    this.owner.set(n, target.slot);
  }

  /** Connector accounts whose source accounts did not all appear; the index is empty afterwards. */
  drainUnfinished(): ExistingAccount[] {
    const rest = this.waitingBySlot.filter((e): e is ExistingAccount => e !== undefined);
    this.waitingBySlot = [];
    return rest;
  }
}
