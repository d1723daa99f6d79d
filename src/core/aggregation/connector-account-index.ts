import type { PlatformAccount } from '../ports/platform';
import { ACCOUNTS_ATTRIBUTE, stringList } from './connector-account';

/** A connector account read at the start of the run, waiting for its source accounts. */
export interface ExistingAccount {
  account: PlatformAccount;
  /** Source account ids it is built from (plus links a review decision adds in this run). */
  contributors: string[];
  /** Its source accounts read so far in this run. */
  seen: PlatformAccount[];
}

/**
 * The connector accounts of the source, indexed by key, by source account and by identity: which
 * connector account a source account belongs to. Rebuilt from the platform on every run.
 */
export class ConnectorAccountIndex {
  private readonly existing = new Map<string, ExistingAccount>();
  /** Source account id -> key of the connector account it belongs to. */
  private readonly owner = new Map<string, string>();
  /** Identity id -> key of the connector account correlated with it. */
  private readonly byIdentity = new Map<string, string>();

  add(account: PlatformAccount): void {
    const key = account.nativeIdentity;
    const contributors = stringList(account.attributes[ACCOUNTS_ATTRIBUTE]);
    this.existing.set(key, { account, contributors, seen: [] });
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
    existing.seen.push(account);
    if (existing.seen.length < existing.contributors.length) return undefined;
    this.existing.delete(existing.account.nativeIdentity);
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
    this.owner.set(accountId, target.account.nativeIdentity);
  }

  /** Connector accounts whose source accounts did not all appear; the index is empty afterwards. */
  drainUnfinished(): ExistingAccount[] {
    const rest = [...this.existing.values()];
    this.existing.clear();
    return rest;
  }
}
