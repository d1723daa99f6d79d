import { Prng } from './prng';
import { notFound } from './errors';
import type {
  AccessProfileRecord,
  AccountRecord,
  GroundTruthRow,
  IdentityRecord,
  JsonObject,
  SourceRecord,
  TaskRecord,
  WorkflowRun,
} from './records';

/** Facts about the generated tenant that tests and the demo need to find their way. */
export interface TenantMeta {
  seed: number;
  fusionSourceId?: string;
  fusionSourceName?: string;
  ownerIdentityId?: string;
  managedSourceIds: string[];
  disabledSourceIds: string[];
}

/**
 * The tenant's state in memory. Collections are Maps (insertion order = listing order); secondary
 * indexes keep the connector's hot queries (accounts of a source, accounts of an identity, account by
 * native identity) O(1). Every mutation bumps a version so list caches know when to recompute.
 */
export class Tenant {
  readonly prng: Prng;
  readonly meta: TenantMeta;
  readonly sources = new Map<string, SourceRecord>();
  readonly accounts = new Map<string, AccountRecord>();
  readonly identities = new Map<string, IdentityRecord>();
  readonly accessProfiles = new Map<string, AccessProfileRecord>();
  readonly formDefinitions = new Map<string, JsonObject>();
  readonly formInstances = new Map<string, JsonObject>();
  readonly workflows = new Map<string, JsonObject>();
  readonly workflowRuns: WorkflowRun[] = [];
  readonly tasks = new Map<string, TaskRecord>();
  readonly events: JsonObject[] = [];
  groundTruth: GroundTruthRow[] = [];
  /** Bumped on every mutation of the named collection. */
  readonly versions = { sources: 0, accounts: 0, identities: 0, accessProfiles: 0, forms: 0, workflows: 0, events: 0 };

  private readonly bySource = new Map<string, Map<string, AccountRecord>>();
  private readonly byIdentity = new Map<string, Set<string>>();
  private readonly byNative = new Map<string, string>();
  private readonly byAccessProfile = new Map<string, Set<string>>();

  constructor(seed = 1) {
    this.prng = new Prng(seed ^ 0x5eed);
    this.meta = { seed, managedSourceIds: [], disabledSourceIds: [] };
  }

  newId(): string {
    return this.prng.hexId();
  }

  now(): string {
    return new Date().toISOString();
  }

  // ---- sources ----
  addSource(s: SourceRecord): SourceRecord {
    this.sources.set(s.id, s);
    if (!this.bySource.has(s.id)) this.bySource.set(s.id, new Map());
    this.versions.sources++;
    return s;
  }

  source(id: string): SourceRecord {
    const s = this.sources.get(id);
    if (!s) throw notFound(`Source ${id} was not found`);
    return s;
  }

  sourceByName(name: string): SourceRecord | undefined {
    for (const s of this.sources.values()) if (s.name === name) return s;
    return undefined;
  }

  replaceSource(s: SourceRecord): void {
    this.sources.set(s.id, s);
    this.versions.sources++;
  }

  // ---- accounts ----
  private nativeKey(sourceId: string, nativeIdentity: string): string {
    return `${sourceId}\u0000${nativeIdentity}`;
  }

  addAccount(a: AccountRecord): AccountRecord {
    let perSource = this.bySource.get(a.sourceId);
    if (!perSource) {
      perSource = new Map();
      this.bySource.set(a.sourceId, perSource);
    }
    this.accounts.set(a.id, a);
    perSource.set(a.id, a);
    this.byNative.set(this.nativeKey(a.sourceId, a.nativeIdentity), a.id);
    if (a.identityId) this.link(a.identityId, a.id);
    this.versions.accounts++;
    return a;
  }

  account(id: string): AccountRecord {
    const a = this.accounts.get(id);
    if (!a) throw notFound(`Account ${id} was not found`);
    return a;
  }

  accountByNative(sourceId: string, nativeIdentity: string): AccountRecord | undefined {
    const id = this.byNative.get(this.nativeKey(sourceId, nativeIdentity));
    return id === undefined ? undefined : this.accounts.get(id);
  }

  accountsOfSource(sourceId: string): Map<string, AccountRecord> {
    return this.bySource.get(sourceId) ?? new Map();
  }

  accountIdsOfIdentity(identityId: string): ReadonlySet<string> {
    return this.byIdentity.get(identityId) ?? new Set();
  }

  /** Applies field changes to an account, keeping the indexes right. */
  updateAccount(id: string, changes: Partial<Omit<AccountRecord, 'id' | 'sourceId'>>): AccountRecord {
    const a = this.account(id);
    if (changes.identityId !== undefined || 'identityId' in changes) {
      if (a.identityId) this.unlink(a.identityId, a.id);
      if (changes.identityId) this.link(changes.identityId, a.id);
    }
    if (changes.nativeIdentity !== undefined && changes.nativeIdentity !== a.nativeIdentity) {
      this.byNative.delete(this.nativeKey(a.sourceId, a.nativeIdentity));
      this.byNative.set(this.nativeKey(a.sourceId, changes.nativeIdentity), a.id);
    }
    Object.assign(a, changes, { modified: this.now() });
    this.versions.accounts++;
    this.versions.identities++;
    return a;
  }

  removeAccount(id: string): AccountRecord {
    const a = this.account(id);
    this.accounts.delete(id);
    this.bySource.get(a.sourceId)?.delete(id);
    this.byNative.delete(this.nativeKey(a.sourceId, a.nativeIdentity));
    if (a.identityId) this.unlink(a.identityId, a.id);
    this.versions.accounts++;
    this.versions.identities++;
    return a;
  }

  private link(identityId: string, accountId: string): void {
    let set = this.byIdentity.get(identityId);
    if (!set) {
      set = new Set();
      this.byIdentity.set(identityId, set);
    }
    set.add(accountId);
  }

  private unlink(identityId: string, accountId: string): void {
    this.byIdentity.get(identityId)?.delete(accountId);
  }

  // ---- identities ----
  addIdentity(i: IdentityRecord): IdentityRecord {
    this.identities.set(i.id, i);
    for (const ap of i.access) this.linkAccess(ap, i.id);
    this.versions.identities++;
    return i;
  }

  identity(id: string): IdentityRecord {
    const i = this.identities.get(id);
    if (!i) throw notFound(`Identity ${id} was not found`);
    return i;
  }

  updateIdentity(id: string, changes: Partial<Omit<IdentityRecord, 'id'>>): IdentityRecord {
    const i = this.identity(id);
    if (changes.access) {
      for (const ap of i.access) this.byAccessProfile.get(ap)?.delete(i.id);
      for (const ap of changes.access) this.linkAccess(ap, i.id);
    }
    Object.assign(i, changes, { modified: this.now() });
    this.versions.identities++;
    return i;
  }

  removeIdentity(id: string): IdentityRecord {
    const i = this.identity(id);
    for (const ap of i.access) this.byAccessProfile.get(ap)?.delete(id);
    for (const accountId of [...this.accountIdsOfIdentity(id)])
      this.updateAccount(accountId, { identityId: undefined });
    this.byIdentity.delete(id);
    this.identities.delete(id);
    this.versions.identities++;
    return i;
  }

  /** Assigns an access profile to an identity (the way reviewers are made). */
  assignAccessProfile(identityId: string, accessProfileId: string): void {
    const i = this.identity(identityId);
    if (!this.accessProfiles.has(accessProfileId)) throw notFound(`Access profile ${accessProfileId} was not found`);
    if (!i.access.includes(accessProfileId))
      this.updateIdentity(identityId, { access: [...i.access, accessProfileId] });
  }

  identitiesWithAccess(accessProfileId: string): string[] {
    return [...(this.byAccessProfile.get(accessProfileId) ?? [])];
  }

  private linkAccess(accessProfileId: string, identityId: string): void {
    let set = this.byAccessProfile.get(accessProfileId);
    if (!set) {
      set = new Set();
      this.byAccessProfile.set(accessProfileId, set);
    }
    set.add(identityId);
  }

  // ---- access profiles ----
  addAccessProfile(ap: AccessProfileRecord): AccessProfileRecord {
    this.accessProfiles.set(ap.id, ap);
    this.versions.accessProfiles++;
    return ap;
  }

  // ---- events (search index `events`) ----
  addEvent(e: JsonObject): void {
    this.events.push(e);
    this.versions.events++;
  }
}
