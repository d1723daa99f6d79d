/** The matcher the aggregation and `fusion-proxy match` hold: in-thread, over threads or over child jobs. */
import type { Matcher } from '../matcher';
import type { MatchOptions, MatchRecord, MatchResult, ModelParameters, ParameterEstimate } from '../types';
import { collectingFeed, type EstimateFeed } from './estimate-feed';

/** A new account foreseen (AsyncMatcher.foresee). */
export interface ForeseenRecord extends MatchRecord {
  /** The identity its source account is correlated with: never its own potential duplicate. */
  identityId?: string;
}

/** What the aggregation and `fusion-proxy match` use: Matcher, asynchronous where shards work. */
export interface AsyncMatcher {
  /**
   * `foreseen`: per record, the id of the foreseen account it was made from (foresee); required once
   * foresee() has returned true, when only foreseen accounts may join the baseline.
   */
  addBaseline(records: Iterable<MatchRecord>, foreseen?: readonly string[]): void;
  /**
   * The run's next new accounts, in the order it will match them (their attributes as match() and
   * addBaseline() will get them), from here to the end of the run. True: this matcher blocks them ahead
   * (foreseen-accounts.ts), so the caller gains by telling it early; every later call must then match
   * only foreseen accounts, in that order. False (the default, decided at the first call): a hint ignored.
   */
  foresee(records: readonly ForeseenRecord[]): boolean;
  match(newRecords: readonly MatchRecord[], opts?: MatchOptions): Promise<MatchResult>;
  estimate(newRecords: readonly MatchRecord[]): Promise<ParameterEstimate | undefined>;
  /**
   * estimate() fed account by account (estimate-feed.ts): the estimate of every account added, begun
   * while they are still being read. The matcher takes no other call until the feed's finish().
   */
  beginEstimate(): EstimateFeed;
  parameters(): ModelParameters | undefined;
  useParameters(parameters: ModelParameters): void;
  /** Ends the shards (threads); idempotent. The matcher matches in-thread afterwards. */
  close(): Promise<void>;
}

/** A Matcher as an AsyncMatcher, in-thread, its estimate in one call (benches; tests that watch the matcher). */
export function inThread(m: Matcher): AsyncMatcher {
  return {
    addBaseline: (records) => m.addBaseline(records),
    foresee: () => false,
    match: async (records, o) => m.match(records, o),
    estimate: async (records) => m.estimate(records),
    beginEstimate: () => collectingFeed(async (records) => m.estimate(records)),
    parameters: () => m.parameters(),
    useParameters: (p) => m.useParameters(p),
    close: async () => undefined,
  };
}
