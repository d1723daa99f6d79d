/**
 * The id pool numbers ids (src/core/aggregation/id-pool.ts): hex ids and lowercase UUIDs as 128 bits,
 * anything else as a string. An id must get one number, read back exactly as given, and never be
 * confused with another: same bits written as hex and as a UUID, upper case, near misses, collisions.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { IdPool } from '../../src/core/aggregation/id-pool';

const hex = '0123456789abcdef0123456789abcdef';
const uuidOfHex = '01234567-89ab-cdef-0123-456789abcdef';

describe('id pool', () => {
  it('numbers each id once, in the order first added, and reads it back as given', () => {
    const pool = new IdPool();
    const ids = [
      hex,
      uuidOfHex,
      hex.toUpperCase(),
      '0123456789abcdef0123456789abcde', // 31 digits
      '0123456789abcdef0123456789abcdef0', // 33
      '0123456789abcdef0123456789abcdeg', // not hex
      '01234567-89ab-cdef-0123-456789abcdeX',
      '01234567089ab-cdef-0123-456789abcdef', // a dash out of place
      '012345678-9ab-cdef-0123-456789abcdef',
      '',
      'clé-ü-中',
      '00000000000000000000000000000000',
      'ffffffffffffffffffffffffffffffff',
      '00000000-0000-0000-0000-000000000000',
    ];
    const numbers = ids.map((id) => pool.add(id));
    expect(numbers).toEqual(ids.map((_, i) => i));
    expect(ids.map((id) => pool.add(id))).toEqual(numbers);
    expect(ids.map((id) => pool.find(id))).toEqual(numbers);
    expect(numbers.map((n) => pool.id(n))).toEqual(ids);
    expect(pool.size).toBe(ids.length);
  });

  it('finds nothing for an id never added (-1), and has no id for an unused number', () => {
    const pool = new IdPool();
    pool.add(hex);
    expect(pool.find(uuidOfHex)).toBe(-1);
    expect(pool.find(hex.toUpperCase())).toBe(-1);
    expect(pool.find('')).toBe(-1);
    expect(() => pool.id(1)).toThrow(RangeError);
    expect(() => pool.id(-1)).toThrow(RangeError);
  });

  it('holds 100,000 random ids of every kind through its growth (hash collisions included)', () => {
    const pool = new IdPool();
    const ids: string[] = [];
    for (let i = 0; i < 100_000; i++) {
      const kind = i % 3;
      ids.push(kind === 0 ? randomBytes(16).toString('hex') : kind === 1 ? randomUUID() : `account-${i}`);
    }
    // Ids that differ in one word only, and a run of near-equal ids, to make probe chains.
    for (let i = 0; i < 2000; i++) ids.push(`${hex.slice(0, 24)}${i.toString(16).padStart(8, '0')}`);
    const unique = [...new Set(ids)];
    const numbers = unique.map((id) => pool.add(id));
    expect(numbers.every((n, i) => n === i)).toBe(true);
    expect(unique.every((id, i) => pool.find(id) === i && pool.id(i) === id)).toBe(true);
    expect(pool.size).toBe(unique.length);
  });
});
