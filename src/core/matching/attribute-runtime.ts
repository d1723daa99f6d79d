import { withKernel } from './algorithms';
import type { CandidateIndex } from './indexes/candidate-collector';
import { KeyIndex, ScanIndex } from './indexes/key-index';
import { OverlapIndex } from './indexes/overlap-index';
import { attributeValues } from './normalize';
import type { AttributeMatchRule, MatchRecord } from './types';

/**
 * One matching attribute over a growing list of records, each record's values prepared once.
 * Records are numbered in the order they are appended; truncate drops the last ones.
 */
export interface AttributeRuntime {
  readonly rule: AttributeMatchRule;
  /** Records prepared. */
  readonly count: number;
  hasValue(r: number): boolean;
  /**
   * Record r's first prepared value, for sharing instead of copying: the normalised text itself for
   * exact, Jaro-Winkler and Levenshtein, a NameValue for the name matcher; undefined without a value.
   */
  first(r: number): unknown;
  /** Best score over the value pairs of records a and b (multi-valued); -1 when either has none. */
  score(a: number, b: number): number;
  /**
   * Prepares the records' values and, once the index exists, indexes them. `batch`: these are a
   * match() call's new records, dropped again when it ends; their prepared values are kept until the
   * next batch, since the ones that become accounts come back through addBaseline() with the same
   * values (the aggregation's created accounts, under new ids) and need not be prepared twice.
   * `clear` (default `batch`): false for the later chunks of one call's records, which add to the
   * batch's kept values rather than replace them.
   */
  append(records: readonly MatchRecord[], batch?: boolean, clear?: boolean): void;
  /** append() for values already extracted and normalised (attributeValues), one list per record. */
  appendValues(lists: readonly (readonly string[])[], batch?: boolean): void;
  /** Drops records >= n (values and index entries). */
  truncate(n: number): void;
  /** The candidate index: built on first use over every record so far, then kept up to date. */
  index(): CandidateIndex;
}

/**
 * `transform`: applied to each normalised value before it is prepared (the probabilistic model blocks
 * an e-mail attribute on its local part).
 */
export function prepareAttribute(
  rule: AttributeMatchRule,
  records: readonly MatchRecord[] = [],
  transform?: (normalised: string) => string,
): AttributeRuntime {
  return withKernel(rule.algorithm, (kernel) => {
    type P = Parameters<typeof kernel.score>[0];
    const values: P[][] = [];
    const NONE: P[] = [];
    let built: CandidateIndex | undefined;
    const score = (a: number, b: number): number => {
      const va = values[a]!;
      const vb = values[b]!;
      if (va.length === 0 || vb.length === 0) return -1;
      if (va.length === 1 && vb.length === 1) return kernel.score(va[0]!, vb[0]!);
      let best = 0;
      for (let i = 0; i < va.length; i++) {
        for (let j = 0; j < vb.length; j++) {
          const s = kernel.score(va[i]!, vb[j]!);
          if (s > best) best = s;
          if (best === 100) return best;
        }
      }
      return best;
    };
    // The last batch's prepared lists by their source: the raw value (append) or the one normalised
    // text (appendValues). Preparation is a function of that text alone, so a hit is always right.
    const batchRaw = new Map<string, P[]>();
    const batchText = new Map<string, P[]>();
    const appendValues = (lists: readonly (readonly string[])[], batch = false): void => {
      if (batch) batchText.clear();
      for (const given of lists) {
        const texts = transform ? given.map(transform) : given;
        const single = texts.length === 1 ? texts[0]! : undefined;
        let list = single !== undefined && !batch && batchText.size > 0 ? batchText.get(single) : undefined;
        if (!list) {
          list = preparedList(texts);
          if (batch && single !== undefined) batchText.set(single, list);
        }
        values.push(list);
      }
      built?.append(values.length);
    };
    // Lists sized exactly: an array grown by push() from empty reserves 17 slots (152 bytes) for
    // the one value most records have, which was most of a record's prepared size (bench:aggregation-memory).
    const preparedList = (texts: readonly string[]): P[] => {
      if (texts.length === 1) {
        const p = kernel.prepare(texts[0]!);
        return p === null ? NONE : [p];
      }
      let list: P[] = NONE; // shared empty list: most sparse attributes cost one pointer per record
      for (const text of texts) {
        const p = kernel.prepare(text);
        if (p === null) continue;
        if (list === NONE) list = [];
        list.push(p);
      }
      return list.length > 1 ? list.slice() : list.length === 1 ? [list[0]!] : NONE;
    };
    const append = (recs: readonly MatchRecord[], batch = false, clear = batch): void => {
      if (clear) batchRaw.clear();
      const reuse = !batch && batchRaw.size > 0;
      for (const rec of recs) {
        const raw = rec.attributes[rule.attribute];
        let list = reuse && typeof raw === 'string' ? batchRaw.get(raw) : undefined;
        if (!list) {
          const texts = attributeValues(raw);
          list = preparedList(transform ? texts.map(transform) : texts);
          if (batch && typeof raw === 'string') batchRaw.set(raw, list);
        }
        values.push(list);
      }
      built?.append(values.length);
    };
    const truncate = (n: number): void => {
      if (n >= values.length) return;
      built?.truncate(n);
      values.length = n;
    };
    const index = (): CandidateIndex => {
      if (built) return built;
      const filter = kernel.filter(rule.threshold);
      switch (filter.kind) {
        case 'overlap':
          built = new OverlapIndex(filter, values);
          break;
        case 'keys':
          built = new KeyIndex(filter, values);
          break;
        case 'all':
          built = new ScanIndex(values);
          break;
        case 'custom':
          built = filter.build(values);
          break;
      }
      return built;
    };
    append(records);
    return {
      rule,
      get count() {
        return values.length;
      },
      hasValue: (r: number) => values[r]!.length > 0,
      first: (r: number): unknown => values[r]![0],
      score,
      append,
      appendValues,
      truncate,
      index,
    };
  });
}
