/**
 * Records as a shard needs them: the matching attributes' normalised values only (no record objects,
 * no other attributes), in shared memory, so one copy serves every thread. Ids are interned to
 * integers by the owner: a shard only needs to tell whether two records share an id.
 */
import { attributeValues } from '../normalize';
import type { AttributeMatchRule, MatchRecord } from '../types';

export interface RecordColumns {
  records: number;
  attributes: number;
  /** Interned id per record. */
  keys: Int32Array;
  /** Values of record r, attribute i: value numbers valueStart[r*A+i] .. valueStart[r*A+i+1]-1. */
  valueStart: Int32Array;
  /** Value v is text[textStart[v] .. textStart[v+1]) (UTF-16 code units). */
  textStart: Int32Array;
  /** The values' text, UTF-16LE. */
  text: Uint8Array;
}

function shared(bytes: number): SharedArrayBuffer {
  return new SharedArrayBuffer(Math.max(bytes, 4));
}

/** Encodes records; `intern` maps a record id to its integer key. */
export function encodeRecords(
  records: readonly MatchRecord[],
  rules: readonly AttributeMatchRule[],
  intern: (id: string) => number,
): RecordColumns {
  const A = rules.length;
  const keys = new Int32Array(shared(records.length * 4), 0, records.length);
  const valueStart = new Int32Array(shared((records.length * A + 1) * 4), 0, records.length * A + 1);
  const texts: string[] = [];
  const ends: number[] = [0];
  let chars = 0;
  records.forEach((rec, r) => {
    keys[r] = intern(rec.id);
    for (let i = 0; i < A; i++) {
      valueStart[r * A + i] = texts.length;
      for (const v of attributeValues(rec.attributes[rules[i]!.attribute])) {
        texts.push(v);
        chars += v.length;
        ends.push(chars);
      }
    }
  });
  valueStart[records.length * A] = texts.length;
  const textStart = new Int32Array(shared(ends.length * 4), 0, ends.length);
  textStart.set(ends);
  const text = new Uint8Array(shared(chars * 2), 0, chars * 2);
  Buffer.from(text.buffer, 0, chars * 2).write(texts.join(''), 'utf16le');
  return { records: records.length, attributes: A, keys, valueStart, textStart, text };
}

/** Per attribute, per record, its value list; and the ids (the interned keys as text). */
export function decodeRecords(cols: RecordColumns): { ids: string[]; values: string[][][] } {
  const { records, attributes: A, keys, valueStart, textStart, text } = cols;
  const buf = Buffer.from(text.buffer, text.byteOffset, text.byteLength);
  const ids: string[] = new Array<string>(records);
  const values: string[][][] = [];
  for (let i = 0; i < A; i++) values.push(new Array<string[]>(records));
  for (let r = 0; r < records; r++) {
    ids[r] = String(keys[r]);
    for (let i = 0; i < A; i++) {
      const list: string[] = [];
      for (let v = valueStart[r * A + i]!; v < valueStart[r * A + i + 1]!; v++)
        list.push(buf.toString('utf16le', textStart[v]! * 2, textStart[v + 1]! * 2));
      values[i]![r] = list;
    }
  }
  return { ids, values };
}

/** Bytes of shared memory the columns hold. */
export function columnBytes(cols: RecordColumns): number {
  return cols.keys.byteLength + cols.valueStart.byteLength + cols.textStart.byteLength + cols.text.byteLength;
}
