import type { PlatformAccount } from '../ports/platform';
import { ACCOUNTS_ATTRIBUTE, stringList } from './connector-account';
import { RecordPacker, type Packed, type PackedAccount } from './packed-account';
import { leaveOutRepeated, restoreRepeated } from './repeated-attributes';

/**
 * A connector account read at the start of the run, waiting for its source accounts. What the run
 * needs of it stays at hand (key, state, contributors); its attributes and the source accounts read
 * so far are kept packed, so that holding every connector account of a tenant costs about their
 * JSON size (less the attributes that repeat its key and contributors: repeated-attributes.ts).
 */
export class ExistingAccount {
  /** Allocated on the first account that has to wait (most connector accounts have one source account). */
  private seenPacked?: PackedAccount[];
  /** The source account that completed it: used right away, so never packed. */
  private last?: PlatformAccount;
  /** Bit 0: disabled; above it, what leaveOutRepeated left out of the packed attributes. */
  private flags: number;
  private packedAttributes: Packed<Record<string, unknown>>;
  /**
   * Source account ids it is built from (plus links a review decision adds in this run): most
   * connector accounts have one, kept without an array (about 56 bytes less each).
   */
  private ids: string | string[];

  constructor(
    private readonly packer: RecordPacker,
    /** The account's native identity. */
    readonly key: string,
    disabled: boolean,
    attributes: Record<string, unknown>,
    contributors: readonly string[],
  ) {
    const trimmed = leaveOutRepeated(attributes, key, contributors);
    this.packedAttributes = packer.pack(trimmed.attributes);
    this.flags = (disabled ? 1 : 0) | (trimmed.left << 1);
    this.ids = contributors.length === 1 ? contributors[0]! : contributors.slice();
  }

  get disabled(): boolean {
    return (this.flags & 1) === 1;
  }

  /** Source account ids it is built from (a fresh copy on every call). */
  get contributors(): string[] {
    return typeof this.ids === 'string' ? [this.ids] : this.ids.slice();
  }

  /** The attributes as read from the platform (a fresh copy on every call). */
  attributes(): Record<string, unknown> {
    const left = this.flags >> 1;
    const attributes = this.packer.unpack(this.packedAttributes);
    return left === 0 ? attributes : restoreRepeated(attributes, left, this.key, this.contributors);
  }

  /** Joins a source account to it (a review decision): it waits for that account too. */
  addContributor(id: string): void {
    const ids = this.contributors;
    if (ids.includes(id)) return;
    // The packed attributes may stand for their `accounts` with the ids as read: put them back first.
    if (this.flags >> 1 !== 0) {
      this.packedAttributes = this.packer.pack(this.attributes());
      this.flags &= 1;
    }
    ids.push(id);
    this.ids = ids;
  }

  /** Its source accounts read so far in this run, in the order read. */
  seen(): PlatformAccount[] {
    const seen = (this.seenPacked ?? []).map((p) => this.packer.unpackAccount(p));
    if (this.last) seen.push(this.last);
    return seen;
  }

  /** Records a source account read; true once all of its contributors were read. */
  addSeen(account: PlatformAccount): boolean {
    const count = typeof this.ids === 'string' ? 1 : this.ids.length;
    if ((this.seenPacked?.length ?? 0) + 1 < count) {
      (this.seenPacked ??= []).push(this.packer.packAccount(account));
      return false;
    }
    if (this.last) (this.seenPacked ??= []).push(this.packer.packAccount(this.last));
    this.last = account;
    return true;
  }
}

/**
 * The connector accounts of the source, indexed by key, by source account and by identity: which
 * connector account a source account belongs to. Rebuilt from the platform on every run.
 */
export class ConnectorAccountIndex {
  private readonly packer = new RecordPacker();
  private readonly existing = new Map<string, ExistingAccount>();
  /** Source account id -> key of the connector account it belongs to. */
  private readonly owner = new Map<string, string>();
  /** Identity id -> key of the connector account correlated with it. */
  private readonly byIdentity = new Map<string, string>();

  add(account: PlatformAccount): void {
    const key = account.nativeIdentity;
    const contributors = stringList(account.attributes[ACCOUNTS_ATTRIBUTE]);
    this.existing.set(key, new ExistingAccount(this.packer, key, account.disabled, account.attributes, contributors));
    for (const id of contributors) this.owner.set(id, key);
    if (account.identityId) this.byIdentity.set(account.identityId, key);
  }

  /** Key of the connector account a source account belongs to (by its id, else by its identity). */
  keyOf(account: PlatformAccount): string | undefined {
    return this.owner.get(account.id) ?? (account.identityId ? this.byIdentity.get(account.identityId) : undefined);
  }

  /** A connector account still waiting for source accounts. */
  waiting(key: string): ExistingAccount | undefined {
    return this.existing.get(key);
  }

  /** Records a source account read; returns the connector account once all of its sources were read. */
  see(existing: ExistingAccount, account: PlatformAccount): ExistingAccount | undefined {
    if (!existing.addSeen(account)) return undefined;
    this.existing.delete(existing.key);
    return existing;
  }

  /**
   * The connector account a review decision names: `account` names a source account of a
   * connector account, or (for an account created earlier in the run that found the duplicate)
   * that connector account's key itself; `identity` names the identity it is correlated with.
   */
  target(identityId: string, candidateKind: 'identity' | 'account'): ExistingAccount | undefined {
    const byKey = this.existing.has(identityId) ? identityId : undefined;
    const key =
      candidateKind === 'account' ? (this.owner.get(identityId) ?? byKey) : (this.byIdentity.get(identityId) ?? byKey);
    return key ? this.existing.get(key) : undefined;
  }

  /** A review decision joins a source account to a connector account: it waits for it too. */
  link(accountId: string, target: ExistingAccount): void {
    target.addContributor(accountId);
    this.owner.set(accountId, target.key);
  }

  /** Connector accounts whose source accounts did not all appear; the index is empty afterwards. */
  drainUnfinished(): ExistingAccount[] {
    const rest = [...this.existing.values()];
    this.existing.clear();
    return rest;
  }
}
