/**
 * What a run reads before its first source account: the connector's own accounts (the unique-value
 * registry and the index of which source account belongs to which connector account are rebuilt from
 * them on every run) and the identity baseline ("Identity Scope Query") the matcher compares against.
 */
import type { FusionConfig } from '../config/fusion-config';
import type { CandidateDirectory } from './candidate-directory';
import type { AsyncMatcher } from '../matching/parallel/async-matcher';
import type { MatchRecord } from '../matching/types';
import type { Logger } from '../ports/logger';
import type { CallOptions, PlatformSession, PlatformSource } from '../ports/platform';
import type { AggregationSummary } from './aggregation-summary';
import { AttributeGenerator } from './attribute-generator';
import type { ConnectorAccountIndex } from './connector-account-index';
import { sideBySide } from './side-by-side';
import type { UniqueRegistry } from './unique-registry';

export interface RunInputsArgs {
  config: FusionConfig;
  platform: PlatformSession;
  logger: Logger;
  summary: AggregationSummary;
  opts: CallOptions;
  progress: () => void;
}

/** The registry and the index the connector accounts are read into. */
export interface ConnectorAccountsInto {
  registry: UniqueRegistry;
  index: ConnectorAccountIndex;
}

export interface RunInputsReading {
  own: PlatformSource;
  reset: boolean;
  into: ConnectorAccountsInto;
  /** Builds the matcher and loads the baseline into it, leaving out `resetIdentities`, reading with `inputs`. */
  loadBaseline: (resetIdentities: ReadonlySet<string>, inputs: RunInputsArgs) => Promise<void>;
}

/**
 * Reads the connector accounts and loads the identity baseline. Side by side: on a later run both are as
 * large as the tenant (one connector account per identity), the identities' search pages come one after
 * the other (each needs the last key of the one before), and the connector accounts' pages spend the rate
 * limit meanwhile; both are held to the end of the run either way. One after the other with a reset: its
 * baseline leaves out the identities of the connector accounts it drops, known only once they are all read.
 */
export async function readRunInputs(a: RunInputsArgs, how: RunInputsReading): Promise<void> {
  const { own, reset, into, loadBaseline } = how;
  if (reset) {
    const resetIdentities = await readConnectorAccounts(a, own, true, into);
    await loadBaseline(resetIdentities, a);
    return;
  }
  await sideBySide(a.opts.signal, [
    (signal) => readConnectorAccounts({ ...a, opts: { ...a.opts, signal } }, own, false, into),
    (signal) => loadBaseline(new Set(), { ...a, opts: { ...a.opts, signal } }),
  ]);
}

/**
 * Reads the connector accounts into the registry and the index; with a reset, they are dropped instead
 * and their identities returned (not a baseline for their own rebuilt accounts).
 */
async function readConnectorAccounts(
  a: RunInputsArgs,
  own: PlatformSource,
  reset: boolean,
  into: ConnectorAccountsInto,
): Promise<Set<string>> {
  const registered = AttributeGenerator.registeredNames(a.config.attributeDefinitions);
  const resetIdentities = new Set<string>();
  let n = 0;
  for await (const account of a.platform.listAccounts({ sourceId: own.id }, a.opts)) {
    n++;
    if (reset) {
      if (account.identityId) resetIdentities.add(account.identityId);
      a.summary.accountsReset++;
      continue;
    }
    for (const name of registered) into.registry.register(name, account.attributes[name]);
    into.index.add(account);
    if (n % 1000 === 0) a.progress();
  }
  a.logger.info({ connectorAccounts: n, reset }, `Read ${n} connector accounts`);
  return resetIdentities;
}

/** Loads the identities of the "Identity Scope Query" into the matcher's baseline, 1,000 at a time. */
export async function loadIdentityBaseline(
  a: RunInputsArgs,
  matcher: AsyncMatcher,
  resetIdentities: ReadonlySet<string>,
  directory?: CandidateDirectory,
): Promise<void> {
  const { config, summary, logger } = a;
  let chunk: MatchRecord[] = [];
  for await (const identity of a.platform.searchIdentities(config.identityScopeQuery, a.opts)) {
    if (resetIdentities.has(identity.id)) continue;
    const ref = directory?.add(identity.id, identity.name, identity.attributes);
    chunk.push(
      ref === undefined
        ? { id: identity.id, attributes: identity.attributes }
        : { id: identity.id, attributes: identity.attributes, ref },
    );
    summary.baselineIdentities++;
    if (chunk.length >= 1000) {
      matcher.addBaseline(chunk);
      chunk = [];
      a.progress();
    }
  }
  matcher.addBaseline(chunk);
  if (summary.baselineIdentities === 0) {
    logger.warn(
      { query: config.identityScopeQuery },
      'The identity baseline is empty: check the Identity Scope Query; no account can match an identity',
    );
  } else {
    logger.info(
      { identities: summary.baselineIdentities },
      `Identity baseline: ${summary.baselineIdentities} identities`,
    );
  }
}
