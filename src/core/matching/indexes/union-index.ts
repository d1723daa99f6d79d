import type { CandidateCollector, CandidateIndex, ProbeInfo } from './candidate-collector';

/**
 * Several indexes over the same values whose candidates together are every passing pair (each
 * part lossless for its own share of the pairs, e.g. the Jaro-Winkler prefix cases): probes all
 * parts into one collector, which keeps each candidate once.
 */
export class UnionIndex implements CandidateIndex {
  readonly lossless = true;

  constructor(private readonly parts: readonly CandidateIndex[]) {}

  get count(): number {
    return this.parts[0]!.count;
  }

  append(n: number): void {
    for (const p of this.parts) p.append(n);
  }

  truncate(n: number): void {
    for (const p of this.parts) p.truncate(n);
  }

  estimate(r: number): number {
    let work = 0;
    for (const p of this.parts) work += p.estimate(r);
    return work;
  }

  probe(r: number, limit: number, out: CandidateCollector): ProbeInfo {
    let fullScan = false;
    for (const p of this.parts) if (p.probe(r, limit, out).fullScan) fullScan = true;
    return { fullScan };
  }
}
