import type { PlatformAccount } from '../ports/platform';
import { ACCOUNTS_ATTRIBUTE, stringList } from './connector-account';
import { RecordPacker, type Packed, type PackedAccount } from './packed-account';

/**
 * A connector account read at the start of the run, waiting for its source accounts. What the run
 * needs of it stays at hand (key, state, contributors); its attributes and the source accounts read
 * so far are kept packed, so that holding every connector account of a tenant costs about their
 * JSON size.
 */
export class ExistingAccount {
  /** Allocated on the first account that has to wait (most connector accounts have one source account). */
  private seenPacked?: PackedAccount[];
  /** The source account that completed it: used right away, so never packed. */
  private last?: PlatformAccount;

  constructor(
    private readonly packer: RecordPacker,
    /** The account's native identity. */
    readonly key: string,
    readonly disabled: boolean,
    private readonly packedAttributes: Packed<Record<string, unknown>>,
    /** Source account ids it is built from (plus links a review decision adds in this run). */
    readonly contributors: string[],
  ) {}

  /** The attributes as read from the platform (a fresh copy on every call). */
  attributes(): Record<string, unknown> {
    return this.packer.unpack(this.packedAttributes);
  }

  /** Its source accounts read so far in this run, in the order read. */
  seen(): PlatformAccount[] {
    const seen = (this.seenPacked ?? []).map((p) => this.packer.unpackAccount(p));
    if (this.last) seen.push(this.last);
    return seen;
  }

  /** Records a source account read; true once all of its contributors were read. */
  addSeen(account: PlatformAccount): boolean {
    if ((this.seenPacked?.length ?? 0) + 1 < this.contributors.length) {
      (this.seenPacked ??= []).push(this.packer.packAccount(account));
      return false;
    }
    if (this.last) (this.seenPacked ??= []).push(this.packer.packAccount(this.last));
    this.last = account;
    return true;
  }
}

/** Exactly sized (an array built by push() reserves 17 slots for one id). */
function exact(ids: string[]): string[] {
  return ids.length === 1 ? [ids[0]!] : ids.slice();
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
    const contributors = exact(stringList(account.attributes[ACCOUNTS_ATTRIBUTE]));
    this.existing.set(
      key,
      new ExistingAccount(this.packer, key, account.disabled, this.packer.pack(account.attributes), contributors),
    );
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
    if (!target.contributors.includes(accountId)) target.contributors.push(accountId);
    this.owner.set(accountId, target.key);
  }

  /** Connector accounts whose source accounts did not all appear; the index is empty afterwards. */
  drainUnfinished(): ExistingAccount[] {
    const rest = [...this.existing.values()];
    this.existing.clear();
    return rest;
  }
}
