/**
 * Accounts a run must keep for later (connector accounts until their source accounts are read,
 * source accounts until the rest of their connector account's are, a full probabilistic run's new
 * accounts until every source is read) are kept as JSON text instead of object graphs 3-4 times
 * larger. The attribute names, the same on most accounts of a tenant, are kept once per distinct
 * set of names (a "shape"): an account is the JSON array of its values. The platform sends accounts
 * as JSON, so they read back as the same values: the same keys in the same order (a key whose value
 * JSON cannot hold, such as undefined, is left out, as JSON.stringify leaves it out of an object;
 * a -0 reads back as 0, which the command's JSON output writes as 0 anyway).
 */
import type { PlatformAccount } from '../ports/platform';

declare const packed: unique symbol;

/** A record packed by a RecordPacker (only that packer reads it back). */
export type Packed<T> = string & { readonly [packed]: T };

export type PackedAccount = Packed<PlatformAccount>;

/**
 * Distinct shapes kept per packer; past it, records of new shapes are packed as plain JSON objects
 * (a tenant whose accounts all have different attribute names would otherwise keep every name list).
 */
export const MAX_SHAPES = 4096;

function flat(text: string): string {
  // JSON.stringify returns a rope of its buffer's parts, about 1.5 times the text's size; reading a
  // character flattens it into one string in place (V8), so only the text stays
  // (bench:aggregation-memory: 586 -> 441 bytes for 380 characters).
  text.charCodeAt(0);
  return text;
}

function holdsJson(v: unknown): boolean {
  return v !== undefined && typeof v !== 'function' && typeof v !== 'symbol';
}

/** Packs records (and accounts with their attributes) of one run. */
export class RecordPacker {
  private readonly ids = new Map<string, number>();
  private readonly shapes: string[][] = [];

  /** Shapes kept so far. */
  get shapeCount(): number {
    return this.shapes.length;
  }

  pack<T extends object>(record: T): Packed<T> {
    return flat(JSON.stringify(this.encode(record as Record<string, unknown>))) as Packed<T>;
  }

  unpack<T extends object>(text: Packed<T>): T {
    return this.decode(JSON.parse(text) as unknown) as T;
  }

  /** An account: its attributes take a shape of their own. */
  packAccount(account: PlatformAccount): PackedAccount {
    return this.packWithAttributes(account);
  }

  unpackAccount(text: PackedAccount): PlatformAccount {
    return this.unpackWithAttributes(text);
  }

  /**
   * A record with attributes (an account, a matching record), its attributes a shape of their own: the
   * names of neither are repeated (a matching record: 117 bytes against 162 packed as one object).
   */
  packWithAttributes<T extends { attributes: Record<string, unknown> }>(record: T): Packed<T> {
    return flat(
      JSON.stringify(this.encode({ ...record, attributes: this.encode(record.attributes) } as Record<string, unknown>)),
    ) as Packed<T>;
  }

  unpackWithAttributes<T extends { attributes: Record<string, unknown> }>(text: Packed<T>): T {
    const record = this.decode(JSON.parse(text) as unknown);
    return { ...record, attributes: this.decode(record.attributes) } as unknown as T;
  }

  /** [shape id, ...values], or the record itself once MAX_SHAPES shapes are kept. */
  private encode(record: Record<string, unknown>): unknown {
    const keys = Object.keys(record).filter((k) => holdsJson(record[k]));
    const signature = keys.join('\u0000');
    let id = this.ids.get(signature);
    if (id === undefined) {
      if (this.shapes.length >= MAX_SHAPES) return record;
      id = this.shapes.length;
      this.shapes.push(keys);
      this.ids.set(signature, id);
    }
    const out: unknown[] = [id];
    for (const k of keys) out.push(record[k]);
    return out;
  }

  private decode(value: unknown): Record<string, unknown> {
    if (!Array.isArray(value)) return value as Record<string, unknown>;
    const keys = this.shapes[value[0] as number]!;
    const out: Record<string, unknown> = {};
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i]!;
      // An own "__proto__" key (JSON.parse makes one) must not set the prototype.
      if (k === '__proto__')
        Object.defineProperty(out, k, { value: value[i + 1], enumerable: true, writable: true, configurable: true });
      else out[k] = value[i + 1];
    }
    return out;
  }
}
