/**
 * What a review form shows of a candidate (display name and the values of the matching attributes),
 * kept from the baseline the run reads anyway, so a review never looks a candidate up on the platform
 * (#27: that cost one identity search per form). One packed string per record: the name and the
 * matching attributes' values, separated by a control character, about 100 bytes per identity.
 */
import type { ReviewCandidate } from '../ports/review-queue';

const SEP = '\u001f';

function text(v: unknown): string {
  if (v === undefined || v === null) return '';
  if (Array.isArray(v)) return v.map(text).join(', ');
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v).replaceAll(SEP, ' ');
}

export class CandidateDirectory {
  /** One packed string per record, by its row (what add() returned). */
  private readonly rows: string[] = [];
  private readonly rowOf = new Map<string, number>();
  /**
   * Each row's details once read. A candidate of many reviews (a common surname's identity is one in
   * about a dozen at 100k) shares one object between them, and the review queue holds every review
   * until matching is over: a copy per candidate was 1.27 M objects at 100k, ~250 k rows read.
   */
  private readonly read: (ReviewCandidate['details'] | undefined)[] = [];

  /** `attributes`: the matching attributes (the only ones a form shows per candidate). */
  constructor(private readonly attributes: readonly string[]) {}

  /** Keeps a record's display data; returns its row (MatchRecord.ref). A record added again takes a new row. */
  add(id: string, name: string, attributes: Record<string, unknown>): number {
    const row = this.rows.push([text(name), ...this.attributes.map((a) => text(attributes[a]))].join(SEP)) - 1;
    this.read.push(undefined);
    this.rowOf.set(id, row);
    return row;
  }

  get size(): number {
    return this.rowOf.size;
  }

  details(id: string): ReviewCandidate['details'] {
    const row = this.rowOf.get(id);
    return row === undefined ? undefined : this.detailsAt(row);
  }

  /**
   * Read once per candidate of every review (every form of a flood of them): cut in place, no split
   * array. By row: a candidate's id from a partition is a new string, whose lookup reads its hash and
   * content (0.6 s of the run's thread per 1.27 M candidates at 100k, docs/benchmarks.md).
   */
  detailsAt(row: number): ReviewCandidate['details'] {
    const known = this.read[row];
    if (known !== undefined) return known;
    const p = this.rows[row];
    if (p === undefined) return undefined;
    let end = p.indexOf(SEP);
    const name = end < 0 ? p : p.slice(0, end);
    const attributes: Record<string, unknown> = {};
    for (const a of this.attributes) {
      if (end < 0) break;
      const start = end + 1;
      end = p.indexOf(SEP, start);
      const stop = end < 0 ? p.length : end;
      if (stop > start) attributes[a] = p.slice(start, stop);
    }
    const details = name ? { name, attributes } : { attributes };
    this.read[row] = details;
    return details;
  }
}
