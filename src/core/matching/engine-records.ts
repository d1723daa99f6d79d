/**
 * The records a matcher holds, baseline first: their ids and, per attribute, the prepared values
 * (AttributeRuntime: normalised text, q-grams, phonetic codes, tokens; no record objects kept). Every
 * structure that follows the record numbers (the combined index, the probabilistic model's per-record
 * state) is appended to and truncated with them, so a call's new records can be added for the call only.
 */
import { type AttributeRuntime, prepareAttribute } from './attribute-runtime';
import type { ProbabilisticModel } from './probabilistic/model';
import { attributeValues } from './normalize';
import { attributeKind } from './probabilistic/comparators';
import { splitEmail } from './probabilistic/local-part';
import { RecordIds } from './record-ids';
import type { CombinedGenerator } from './slice-blocking';
import type { AttributeMatchRule, MatchRecord } from './types';
import { ValueStats } from './value-stats';

export const asArray = (records: Iterable<MatchRecord>): readonly MatchRecord[] =>
  Array.isArray(records) ? (records as readonly MatchRecord[]) : [...records];

export class EngineRecords {
  /** The ids with their hashes (phase 1's own-id test); `ids` is its list. */
  readonly recordIds = new RecordIds();
  readonly ids: string[] = this.recordIds.list;
  readonly runtimes: AttributeRuntime[];
  /** Probabilistic model only: its per-record state follows the records. */
  readonly model: ProbabilisticModel | undefined;
  /** Set once the blocker builds its indexes (the combined index follows the record numbers). */
  combined: CombinedGenerator | undefined;
  /** Probabilistic model (owner and shards alike): chance agreement per attribute, for the blocking. */
  readonly stats: ValueStats | undefined;

  constructor(
    private readonly rules: readonly AttributeMatchRule[],
    model?: (runtimes: readonly AttributeRuntime[]) => ProbabilisticModel,
    probabilistic = model !== undefined,
  ) {
    this.runtimes = rules.map((rule) => matchingRuntime(rule, probabilistic));
    this.model = model?.(this.runtimes);
    this.stats = probabilistic ? new ValueStats(rules.length) : undefined;
  }

  get size(): number {
    return this.ids.length;
  }

  /**
   * `batch`: a call's new records (see AttributeRuntime.append); `clear` false: a later chunk of
   * the same call's records.
   */
  append(records: readonly MatchRecord[], batch = false, clear = batch): void {
    const rules = this.rules;
    this.stats?.append(
      this.ids.length,
      (k, i) => attributeValues(records[k]!.attributes[rules[i]!.attribute])[0] ?? '',
      records.length,
    );
    for (const r of records) this.recordIds.push(r.id);
    for (const rt of this.runtimes) rt.append(records, batch, clear);
    this.combined?.index.append(this.ids.length);
    this.model?.append(records);
  }

  /** Records given as normalised value lists (values[i][r]: attribute i of record r), as a shard receives them. */
  appendValues(ids: readonly string[], values: readonly (readonly (readonly string[])[])[], batch = false): void {
    if (this.model) throw new Error('addValues: only a block-only engine takes prepared values');
    this.stats?.append(this.ids.length, (k, i) => values[i]![k]![0] ?? '', ids.length);
    for (const id of ids) this.recordIds.push(id);
    this.runtimes.forEach((rt, i) => rt.appendValues(values[i]!, batch));
    this.combined?.index.append(this.ids.length);
  }

  truncate(n: number): void {
    this.combined?.index.truncate(n);
    for (const rt of this.runtimes) rt.truncate(n);
    this.model?.truncate(n);
    this.stats?.truncate(n);
    this.recordIds.truncate(n);
  }
}

/** An attribute's values as the engine prepares, scores and indexes them, under either model. */
export function matchingRuntime(rule: AttributeMatchRule, probabilistic: boolean): AttributeRuntime {
  return probabilistic ? blockingRuntime(rule) : prepareAttribute(rule);
}

/**
 * Probabilistic model: an e-mail attribute makes candidates of the addresses with the same local part
 * (at any domain), whatever its algorithm: its comparison levels compare local part and domain apart,
 * and a fuzzy index over whole addresses (which share their domain) brought thousands of pairs per
 * account that no level could turn into a match.
 */
function blockingRuntime(rule: AttributeMatchRule): AttributeRuntime {
  if (attributeKind(rule) !== 'email') return prepareAttribute(rule);
  return prepareAttribute({ ...rule, algorithm: 'exact', threshold: 100 }, [], (v) => splitEmail(v)[0]);
}
