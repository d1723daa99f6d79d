import type { FusionConfig } from '../config/fusion-config';

type ScopeConfig = Pick<FusionConfig, 'aggregationBatchSize' | 'accountFilter' | 'sourceOptions'>;

/**
 * What this aggregation run is, decided once: which configured sources it reads, whether it is a
 * full run, and so what it may do. Only a full run (every configured source read, no "Aggregation
 * batch size", no account filter) may drop what it did not see: reset the connector accounts or
 * discard the review forms of accounts it did not read. Anything less could delete what it
 * cannot rebuild (a disabled source's accounts, the accounts past the limit or the filter).
 */
export class RunScope {
  /** Configured sources this run reads, in configuration order. */
  readonly sourcesRead: readonly string[];
  /** Configured sources this run does not read (disabled on the platform). */
  readonly skippedSources: readonly string[];
  /** Accounts processed at most, when "Aggregation batch size" limits the run. */
  readonly limitedTo: number | undefined;
  /** An account filter (global or per source) excludes accounts from this run. */
  readonly filtered: boolean;

  constructor(config: ScopeConfig, sources: { read: readonly string[]; skipped: readonly string[] }) {
    this.sourcesRead = [...sources.read];
    this.skippedSources = [...sources.skipped];
    this.limitedTo = config.aggregationBatchSize > 0 ? config.aggregationBatchSize : undefined;
    this.filtered =
      config.accountFilter.trim() !== '' ||
      Object.values(config.sourceOptions).some((o) => o.accountFilter.trim() !== '');
  }

  /** Every configured source read, in full. */
  get full(): boolean {
    return this.limitedTo === undefined && this.skippedSources.length === 0 && !this.filtered;
  }

  /**
   * The probabilistic model's parameters are estimated by a run that reads every account it can: no
   * "Aggregation batch size", no account filter. A disabled source is read by no run, so unlike `full`
   * it does not make the run partial here.
   */
  get estimatesModel(): boolean {
    return this.limitedTo === undefined && !this.filtered;
  }

  /** "Reset accounts?" takes effect only in a full run; otherwise it waits for one. */
  mayReset(requested: boolean): boolean {
    return requested && this.full;
  }

  /** Forms of accounts the run did not read are discarded only when the run read every account. */
  get mayDiscardForms(): boolean {
    return this.full;
  }

  /** Why this run is not full, for the operator; undefined for a full run. */
  whyLimited(): string | undefined {
    if (this.full) return undefined;
    if (this.skippedSources.length) return `source(s) ${this.skippedSources.join(', ')} are disabled`;
    return 'this run is limited by "Aggregation batch size" or an account filter';
  }
}
