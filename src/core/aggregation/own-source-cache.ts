import type { FusionConfig } from '../config/fusion-config';
import { tenantOf } from '../config/tenant';

/** What a single-account command needs of the connector's own source: where its accounts are. */
export interface OwnSourceRef {
  id: string;
  name: string;
}

/**
 * How long a listing vouches for the own source's id. A source's id never changes and is never reused, so
 * this bounds only how long a replaced source (a new id for the same instance id) costs one extra lookup
 * per command; every listing (an aggregation, a create) starts the time again.
 */
export const OWN_SOURCE_TTL_MS = 10 * 60_000;
/** Instances one runner remembers; a proxy serving more tenants than this lists sources again for the oldest. */
const MAX_ENTRIES = 1_000;

/**
 * The connector's own source per tenant and connector instance, remembered from the last source listing.
 * The platform sends a `std:account:enable` for every new account of an aggregation, each of which used to
 * list the tenant's sources first: with the id remembered an enable is one platform call, not two (or more,
 * when the sources take several pages). Only `locate` trusts an entry, and only to look an account up: when
 * the account is not there the entry is dropped and the sources are listed again (own-source lookups in
 * account-commands.ts), so a stale entry costs a call, never a wrong answer.
 */
export class OwnSourceCache {
  private readonly entries = new Map<string, { ref: OwnSourceRef; until: number }>();

  constructor(
    private readonly ttlMs = OWN_SOURCE_TTL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  get(config: OwnSourceKeyed): OwnSourceRef | undefined {
    const key = ownSourceKey(config);
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (this.now() < entry.until) return entry.ref;
    this.entries.delete(key);
    return undefined;
  }

  remember(config: OwnSourceKeyed, source: OwnSourceRef): void {
    const key = ownSourceKey(config);
    // Re-inserted so that the Map's order is the order of last confirmation: the oldest goes first.
    this.entries.delete(key);
    this.entries.set(key, { ref: { id: source.id, name: source.name }, until: this.now() + this.ttlMs });
    if (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value as string);
  }

  /** Drops the entry if it still names `id`: a newer listing's entry stays. */
  forget(config: OwnSourceKeyed, id: string): void {
    const key = ownSourceKey(config);
    if (this.entries.get(key)?.ref.id === id) this.entries.delete(key);
  }
}

type OwnSourceKeyed = Pick<FusionConfig, 'baseurl' | 'spConnectorInstanceId'>;

/** Per tenant (one host, one set of sources) and connector instance; JSON so no separator can be forged. */
function ownSourceKey(config: OwnSourceKeyed): string {
  return JSON.stringify([tenantOf(config.baseurl), config.spConnectorInstanceId]);
}
