/**
 * The connector accounts an aggregation emits: an existing one refreshed from its source accounts, or a
 * new one built from a source account that has no potential duplicate. Merging, unique values
 * (AttributeGenerator) and the bookkeeping attributes (`accounts`, `sources`, key, name) are applied here,
 * the same way for every batch.
 */
import type { FusionConfig } from '../config/fusion-config';
import type { MatchingSettings } from '../matching/types';
import type { PlatformAccount } from '../ports/platform';
import type { AggregationSummary } from './aggregation-summary';
import type { AttributeGenerator } from './attribute-generator';
import { mergeAttributes, sortBySourceOrder, type SourceAccountView } from './attribute-merge';
import {
  ACCOUNTS_ATTRIBUTE,
  IDENTITY_ATTRIBUTE,
  KEY_ATTRIBUTE,
  NAME_ATTRIBUTE,
  SOURCES_ATTRIBUTE,
  displayNameOf,
  type AccountItem,
} from './connector-account';
import type { ExistingAccount } from './connector-account-index';
import type { DerivedKeys } from './derived-key';
import type { ReviewDecisions } from './review-decisions';

function accountView(account: PlatformAccount): SourceAccountView {
  return { sourceName: account.sourceName, attributes: account.attributes };
}

/** A new account's merged attributes: what it matches with, and what it is created with if it is. */
export function mergedAlone(
  config: Pick<FusionConfig, 'attributeMerge' | 'attributeMaps'>,
  account: PlatformAccount,
): Record<string, unknown> {
  return mergeAttributes(config, [accountView(account)]);
}

/**
 * Only the attributes the matcher reads: what a record carries where it is held or sent elsewhere
 * (an estimate's feed, a partition), the rest of an account's or identity's attributes left behind.
 */
export function matchedAttributes(
  settings: Pick<MatchingSettings, 'attributes'>,
  attributes: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { attribute } of settings.attributes)
    if (attributes[attribute] !== undefined) out[attribute] = attributes[attribute];
  return out;
}

/** What Velocity expressions read: the merged attributes, every source account, and each source's accounts. */
function velocityContext(merged: Record<string, unknown>, accounts: PlatformAccount[]): Record<string, unknown> {
  const sources: Record<string, Record<string, unknown>[]> = {};
  for (const a of accounts) (sources[a.sourceName] ??= []).push(a.attributes);
  return { ...merged, accounts: accounts.map((a) => a.attributes), sources };
}

export class AccountItemBuilder {
  constructor(
    private readonly config: FusionConfig,
    private readonly generator: AttributeGenerator,
    private readonly decisions: ReviewDecisions,
    private readonly summary: AggregationSummary,
    private readonly keys: DerivedKeys,
  ) {}

  /** An existing connector account, refreshed from the source accounts seen in this run. */
  refresh(e: ExistingAccount): AccountItem {
    const key = e.key;
    const stored = e.attributes();
    const seen = sortBySourceOrder(this.config.sources, e.seen());
    const seenIds = new Set(seen.map((a) => a.id));
    const label = `${JSON.stringify(displayNameOf(stored, key))} (${key})`;
    let attributes: Record<string, unknown>;
    if (seen.length === 0) {
      // No source account showed up (limited or filtered run, or an account made by std:account:create):
      // keep what the account has and complete the definitions it still lacks.
      // Its stored `accounts`/`sources` are ids and names, not the attribute maps expressions read:
      // hide them, and render only what the account lacks.
      const generated = this.generator.generate({
        label,
        context: { ...stored, accounts: [], sources: {} },
        existing: stored,
        keepExisting: true,
      });
      attributes = { ...stored, ...generated };
    } else {
      const merged = mergeAttributes(this.config, seen.map(accountView));
      const generated = this.generator.generate({ label, context: velocityContext(merged, seen), existing: stored });
      const contributors = this.decisions.contributorsAfterRefresh(e.contributors, seenIds);
      attributes = {
        ...merged,
        ...generated,
        [ACCOUNTS_ATTRIBUTE]: contributors,
        [SOURCES_ATTRIBUTE]: [...new Set(seen.map((a) => a.sourceName))],
      };
    }
    attributes[KEY_ATTRIBUTE] = key;
    attributes[NAME_ATTRIBUTE] = displayNameOf(attributes, key);
    this.summary.accountsUpdated++;
    return { identity: key, disabled: e.disabled, attributes };
  }

  /** A new connector account (disabled by design: the identity profile's provisioning plan enables it). */
  create(account: PlatformAccount, merged: Record<string, unknown>): AccountItem {
    const key = this.keys.keyOf(account.id);
    const label = `${JSON.stringify(displayNameOf(merged, account.name))} (${account.sourceName} account ${account.nativeIdentity})`;
    const generated = this.generator.generate({
      label,
      context: velocityContext(merged, [account]),
      existing: {},
    });
    const attributes: Record<string, unknown> = {
      ...merged,
      ...generated,
      [ACCOUNTS_ATTRIBUTE]: [account.id],
      [SOURCES_ATTRIBUTE]: [account.sourceName],
      [KEY_ATTRIBUTE]: key,
    };
    const linked = this.decisions.linkedIdentityOf(account.id);
    if (linked) attributes[IDENTITY_ATTRIBUTE] = linked;
    attributes[NAME_ATTRIBUTE] = displayNameOf(attributes, key);
    this.summary.accountsCreated++;
    this.decisions.noteCreated(account.id);
    return { identity: key, disabled: true, attributes };
  }
}
