/** Public types of the matching engine. */

export const ALGORITHMS = ['name-matcher', 'levenshtein', 'jaro-winkler', 'dice', 'double-metaphone', 'exact'] as const;
export type Algorithm = (typeof ALGORITHMS)[number];

/**
 * What an attribute holds, for the probabilistic model's comparators (the rules model ignores it):
 * `name` (full or given name), `surname` (compared per token: hyphenated, double-barrelled),
 * `email` (local part and domain apart), `birthdate` (tolerates swapped day/month and one wrong
 * digit), `identifier` (employee number: equal or not), `text` (bands of the algorithm's score).
 */
export const ATTRIBUTE_KINDS = ['name', 'surname', 'email', 'birthdate', 'identifier', 'text'] as const;
export type AttributeKind = (typeof ATTRIBUTE_KINDS)[number];

export interface AttributeMatchRule {
  attribute: string;
  algorithm: Algorithm;
  /** Absent: inferred (name-matcher: name, exact: identifier, an attribute named like e-mail: email, else text). */
  kind?: AttributeKind;
  /** 0-100; a pair passes this attribute when its score (one decimal) is >= threshold. */
  threshold: number;
  mandatory: boolean;
}

/**
 * `rules`: the spec's per-attribute thresholds and mandatory flags (the default). `probabilistic`:
 * Fellegi-Sunter weights estimated from the tenant's own data; a pair is a potential duplicate when its
 * match probability is at or above `probabilityThreshold` (mandatory attributes still filter).
 */
export const MATCHING_MODELS = ['rules', 'probabilistic'] as const;
export type MatchingModel = (typeof MATCHING_MODELS)[number];

export interface MatchingSettings {
  attributes: AttributeMatchRule[];
  /** Candidates kept per account after ranking (the review form shows at most this many). */
  reviewTopK: number;
  /** Absent: 'rules' (the parser always sets it). */
  model?: MatchingModel;
  /** 0-1, probabilistic model only; absent: DEFAULT_PROBABILITY_THRESHOLD (the parser always sets it). */
  probabilityThreshold?: number;
  /**
   * The review-flood guard: the largest share (0-1] of a run's new accounts that may go to review;
   * absent: DEFAULT_MAX_REVIEW_SHARE (the parser always sets it). 1 switches the guard off.
   */
  maxReviewShare?: number;
}

/** See docs/review-forms.md ("Review-flood guard") for why half. */
export const DEFAULT_MAX_REVIEW_SHARE = 0.5;

/**
 * The explanation entry of the prior: attribute PRIOR_ATTRIBUTE, level PRIOR_LEVEL, weight log2(λ/(1−p))
 * with p the prior (share of accounts with a match), λ = p / (records before the account) the chance
 * that this candidate is the match before any attribute is compared, and 1−p the chance of no match;
 * so that the weights of an explanation add up to its matchWeight.
 */
export const PRIOR_ATTRIBUTE = 'prior';
export const PRIOR_LEVEL = 'share of matches';

import type { LevelContribution } from '../ports/match-explanation';

export type { LevelContribution };

/**
 * Estimated parameters of the probabilistic model: plain JSON, stored on the connector's source so
 * they survive a Redis wipe and are reused by commands that do not re-estimate.
 */
export interface ModelParameters {
  version: 1;
  /** ISO time of the estimation. */
  estimatedAt: string;
  /** Records the estimate was made from. */
  records: number;
  /** Estimated share of true matches among candidate pairs (the prior). */
  prior: number;
  attributes: Array<{
    attribute: string;
    levels: Array<{ level: string; m: number; u: number }>;
  }>;
  /** Model-specific extras (dependence corrections, term-frequency summaries): JSON only. */
  extra?: Record<string, unknown>;
}

/** What an estimate made by Matcher.estimate() rests on. */
export interface ParameterEstimate {
  parameters: ModelParameters;
  /** New accounts given to estimate(). */
  accounts: number;
  /** Blocked candidate pairs of those accounts: what m and the prior are estimated from. */
  candidatePairs: number;
}

/** A record to match: an identity of the baseline or a new/changed account. */
export interface MatchRecord {
  id: string;
  attributes: Record<string, unknown>;
  /**
   * The record's row in the run's candidate directory (aggregation/candidate-directory.ts), where the
   * run keeps one: a partition that finds the record a candidate names its row, and the run reads the
   * candidate's details without looking its id up. Matching ignores it.
   */
  ref?: number;
}

export type CandidateKind = 'identity' | 'account';

export interface PotentialDuplicate {
  accountId: string;
  candidateId: string;
  candidateKind: CandidateKind;
  /** Overall score: mean of the scores of the attributes present on both sides (one decimal). */
  score: number;
  /** Score per attribute present on both sides. */
  scores: Record<string, number>;
  /** Probabilistic model only: match probability 0-1 (ranking key), total match weight, and why. */
  probability?: number;
  matchWeight?: number;
  explanation?: LevelContribution[];
  /** The candidate's MatchRecord.ref, where a partition found it (never part of a review or an item). */
  ref?: number;
}

export type RejectReason = 'below_threshold' | 'mandatory_failed' | 'value_missing';
export type PairOutcome = RejectReason | 'matched';

export interface MatchStats {
  /** New records matched. */
  accounts: number;
  /** Baseline records (identities). */
  baseline: number;
  /** Pairs scored exactly (candidates after filtering). */
  pairsCompared: number;
  /** Scored pairs by outcome. */
  pairs: Record<PairOutcome, number>;
  /** Accounts with at least one potential duplicate. */
  accountsWithDuplicates: number;
  /** Duplicates dropped because an account had more than reviewTopK. */
  truncated: number;
  /** Accounts that lack a value for a mandatory attribute: they cannot match anything. */
  accountsMissingMandatory: number;
  /** Accounts with no value for any matching attribute: nothing comparable, never a match. */
  accountsWithoutValues: number;
  /** Histogram of candidates per account: upper bound -> count (bounds in CANDIDATE_BUCKETS, last is Infinity). */
  candidatesHistogram: number[];
  /** Candidates per account: mean and max. */
  candidatesMean: number;
  candidatesMax: number;
  /** Queries that could not use a filter and scanned every record of compatible length, per algorithm. */
  fullScans: Partial<Record<Algorithm, number>>;
  /** Candidate generator used per account: attribute name -> accounts. */
  generatorUse: Record<string, number>;
  /** Wall time of index build and of matching, ms. */
  buildMs: number;
  matchMs: number;
}

export const CANDIDATE_BUCKETS = [0, 1, 5, 10, 50, 100, 200, 500, 1000, 5000, Infinity] as const;

export interface MatchResult {
  /** accountId -> potential duplicates ranked by score desc (ties: identities first, then candidateId). */
  duplicates: Map<string, PotentialDuplicate[]>;
  stats: MatchStats;
}

export interface MatchOptions {
  /** Override settings.reviewTopK (e.g. Infinity for the tuning tool and the oracle tests). */
  topK?: number;
}

/**
 * Build options of a matcher. Probabilistic model: with `parameters` the matcher uses them as they are
 * (single-account commands); without, it estimates them from the baseline and the records of its first
 * match() call (a full aggregation) and exposes them through Matcher.parameters() to be stored.
 */
export interface MatcherOptions {
  parameters?: ModelParameters;
  /**
   * Where each matched account's count of candidates goes, by the label of the index that generated
   * them; default this process's metric. A partition thread collects them for the run's own thread.
   */
  observeCandidates?: (label: string, k: number) => void;
}
