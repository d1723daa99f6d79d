/**
 * Binary form of what crosses Redis between an aggregation and its matching child jobs: record
 * columns (the matching attributes' normalised values, interned ids) and blocked slices (typed
 * arrays). Layout: a u32 header of scalars and array lengths, then each array's bytes, in a fixed
 * order; decoding copies into fresh (aligned) arrays and checks every length against the buffer.
 */
import { FusionError } from '../core/errors';
import type { BlockedSlice } from '../core/matching/blocked-slice';
import type { RecordColumns } from '../core/matching/parallel/record-columns';

type Typed = Uint8Array | Int16Array | Int32Array | Float64Array;
type Ctor = Uint8ArrayConstructor | Int16ArrayConstructor | Int32ArrayConstructor | Float64ArrayConstructor;

const MAGIC_COLUMNS = 0x46504331; // "FPC1"
const MAGIC_SLICE = 0x46505331; // "FPS1"
const MAGIC_RECORDS = 0x46505231; // "FPR1"

function pack(magic: number, scalars: number[], arrays: Typed[]): Buffer {
  const header = new Uint32Array(2 + scalars.length + arrays.length);
  header[0] = magic;
  header[1] = scalars.length + arrays.length;
  scalars.forEach((v, i) => (header[2 + i] = v));
  arrays.forEach((a, i) => (header[2 + scalars.length + i] = a.length));
  const parts = [Buffer.from(header.buffer), ...arrays.map((a) => Buffer.from(a.buffer, a.byteOffset, a.byteLength))];
  return Buffer.concat(parts);
}

function unpack(what: string, magic: number, buf: Buffer, scalarCount: number, ctors: Ctor[]): [number[], Typed[]] {
  const bad = (why: string): FusionError =>
    new FusionError('MATCHING_SHARD_FAILED', `stored ${what} is malformed (${why})`);
  const words = 2 + scalarCount + ctors.length;
  if (buf.length < words * 4) throw bad('too short');
  const header = new Uint32Array(words);
  Buffer.from(header.buffer).set(buf.subarray(0, words * 4));
  if (header[0] !== magic || header[1] !== scalarCount + ctors.length) throw bad('wrong header');
  const scalars = [...header.subarray(2, 2 + scalarCount)];
  let at = words * 4;
  const arrays = ctors.map((C, i) => {
    const length = header[2 + scalarCount + i]!;
    const bytes = length * C.BYTES_PER_ELEMENT;
    if (at + bytes > buf.length) throw bad('truncated');
    const out = new C(length);
    Buffer.from(out.buffer).set(buf.subarray(at, at + bytes));
    at += bytes;
    return out;
  });
  if (at !== buf.length) throw bad('trailing bytes');
  return [scalars, arrays];
}

export function encodeColumns(c: RecordColumns): Buffer {
  return pack(MAGIC_COLUMNS, [c.records, c.attributes], [c.keys, c.valueStart, c.textStart, c.text]);
}

export function decodeColumns(buf: Buffer): RecordColumns {
  const [[records, attributes], [keys, valueStart, textStart, text]] = unpack('record columns', MAGIC_COLUMNS, buf, 2, [
    Int32Array,
    Int32Array,
    Int32Array,
    Uint8Array,
  ]);
  return {
    records: records!,
    attributes: attributes!,
    keys: keys as Int32Array,
    valueStart: valueStart as Int32Array,
    textStart: textStart as Int32Array,
    text: text as Uint8Array,
  };
}

export function encodeSlice(s: BlockedSlice): Buffer {
  return pack(
    MAGIC_SLICE,
    [s.from, s.count],
    [s.status, s.compared, s.generator, s.matchedStart, s.candidates, s.scores, s.outcomes, s.fullScans],
  );
}

export function decodeSlice(buf: Buffer): BlockedSlice {
  const [[from, count], arrays] = unpack('matching slice', MAGIC_SLICE, buf, 2, [
    Uint8Array,
    Int32Array,
    Int16Array,
    Int32Array,
    Int32Array,
    Float64Array,
    Float64Array,
    Int32Array,
  ]);
  const [status, compared, generator, matchedStart, candidates, scores, outcomes, fullScans] = arrays;
  return {
    from: from!,
    count: count!,
    status: status as Uint8Array,
    compared: compared as Int32Array,
    generator: generator as Int16Array,
    matchedStart: matchedStart as Int32Array,
    candidates: candidates as Int32Array,
    scores: scores as Float64Array,
    outcomes: outcomes as Float64Array,
    fullScans: fullScans as Int32Array,
  };
}

/** A list of record numbers (Shard.exclude). */
export function encodeRecordNumbers(records: Int32Array): Buffer {
  return pack(MAGIC_RECORDS, [], [records]);
}

export function decodeRecordNumbers(buf: Buffer): Int32Array {
  return unpack('record numbers', MAGIC_RECORDS, buf, 0, [Int32Array])[1][0] as Int32Array;
}
