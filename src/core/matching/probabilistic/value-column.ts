/**
 * One attribute's first normalised value per record, dictionary-encoded: each record holds the
 * number of its value (4 bytes), each distinct value its string, how many records hold it and a
 * slot of an open-addressing table. The model kept a string pointer per record and a Map entry per
 * value for the term frequencies (about 45 bytes per record and attribute with near-unique values,
 * e-mails and logins), and per record a token list of its own even when thousands of records share
 * a surname; what is derived from the value alone is now kept per value (see RecordFeatures).
 *
 * Values are numbered in the order records first hold them, so truncating the last records drops
 * exactly the last numbers (a value first held by a dropped record is held by no record before it).
 */
import { EntryTable, type NumberedEntries } from '../../aggregation/entry-table';
import { withCapacity } from '../../typed-arrays';
// FNV-1a over the UTF-16 code units (any string; the table masks the sign away).
import { idHash as hash } from '../record-ids';

const NONE = -1;
const EMPTY = -1;

export class ValueColumn implements NumberedEntries {
  /** Per record: its value's number, NONE when it holds none. */
  private ids = new Int32Array(0);
  private rows = 0;
  /** Per value number: the value, and how many records hold it. */
  private readonly texts: string[] = [];
  private counts = new Int32Array(0);
  private readonly table = new EntryTable(this);
  private probe = '';

  /** Records held. */
  get size(): number {
    return this.rows;
  }

  /** Distinct values held (numbered 0 .. distinct - 1). */
  get distinct(): number {
    return this.texts.length;
  }

  /** Record r's value ('' when it holds none). */
  value(r: number): string {
    const id = this.ids[r]!;
    return id === NONE ? '' : this.texts[id]!;
  }

  /** Record r's value number, -1 when it holds none. */
  idOf(r: number): number {
    return this.ids[r]!;
  }

  /** The value numbered `id`. */
  text(id: number): string {
    return this.texts[id]!;
  }

  /** Records holding record r's value; 0 when it holds none. */
  count(r: number): number {
    const id = this.ids[r]!;
    return id === NONE ? 0 : this.counts[id]!;
  }

  /** The first n records' values, record after record ('' none). */
  *values(n: number): Generator<string> {
    for (let r = 0; r < n && r < this.rows; r++) yield this.value(r);
  }

  /** How many records hold each value, value after value. */
  *valueCounts(): Generator<number> {
    for (let id = 0; id < this.texts.length; id++) yield this.counts[id]!;
  }

  /** Appends a record holding `v` ('' none). */
  push(v: string): void {
    const r = this.rows;
    this.ids = withCapacity(this.ids, r + 1, 1024);
    this.rows = r + 1;
    if (v === '') {
      this.ids[r] = NONE;
      return;
    }
    const slot = this.slotOf(v, hash(v));
    let id = this.table.entryAt(slot);
    if (id === EMPTY) {
      id = this.texts.length;
      this.texts.push(v);
      this.counts = withCapacity(this.counts, id + 1, 1024);
      this.counts[id] = 0;
      this.table.fill(slot, id);
    }
    this.counts[id]!++;
    this.ids[r] = id;
  }

  /** Keeps the first n records. */
  truncate(n: number): void {
    for (let r = this.rows - 1; r >= n; r--) {
      const id = this.ids[r]!;
      if (id === NONE || --this.counts[id]! > 0) continue;
      // Its last holder going is its first holder going: the last value numbered.
      if (id !== this.texts.length - 1) throw new Error(`value column: value ${id} outlived its first record`);
      const v = this.texts[id]!;
      this.table.remove(this.slotOf(v, hash(v)));
      this.texts.length = id;
    }
    if (n < this.rows) this.rows = n;
  }

  private slotOf(v: string, h: number): number {
    this.probe = v;
    return this.table.slotOf(h);
  }

  isProbe(n: number): boolean {
    return this.texts[n] === this.probe;
  }

  hashOf(n: number): number {
    return hash(this.texts[n]!);
  }
}
