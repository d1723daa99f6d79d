import { withKernel } from './algorithms';
import type { CandidateIndex } from './indexes/candidate-collector';
import { KeyIndex, ScanIndex } from './indexes/key-index';
import { OverlapIndex } from './indexes/overlap-index';
import { attributeValues } from './normalize';
import type { AttributeMatchRule, MatchRecord } from './types';

/** One matching attribute over a fixed list of records, with its values prepared once. */
export interface AttributeRuntime {
  readonly rule: AttributeMatchRule;
  hasValue(r: number): boolean;
  /** Best score over the value pairs of records a and b (multi-valued); -1 when either has none. */
  score(a: number, b: number): number;
  buildIndex(): CandidateIndex;
}

export function prepareAttribute(rule: AttributeMatchRule, records: readonly MatchRecord[]): AttributeRuntime {
  return withKernel(rule.algorithm, (kernel) => {
    type P = Parameters<typeof kernel.score>[0];
    const values: P[][] = new Array<P[]>(records.length);
    for (let r = 0; r < records.length; r++) {
      const list: P[] = [];
      for (const text of attributeValues(records[r]!.attributes[rule.attribute])) {
        const p = kernel.prepare(text);
        if (p !== null) list.push(p);
      }
      values[r] = list;
    }
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
    const buildIndex = (): CandidateIndex => {
      const filter = kernel.filter(rule.threshold);
      switch (filter.kind) {
        case 'overlap':
          return new OverlapIndex(filter, values);
        case 'keys':
          return new KeyIndex(filter, values);
        case 'all':
          return new ScanIndex(values);
        case 'custom':
          return filter.build(values);
      }
    };
    return { rule, hasValue: (r: number) => values[r]!.length > 0, score, buildIndex };
  });
}
