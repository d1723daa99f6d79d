import { CompactStringSet } from './compact-string-set';

/**
 * Values taken per unique/uuid/counter attribute (compact sets: a later run at 1M identities holds
 * about 2M values). Rebuilt at the start of every run from the
 * connector's accounts on the platform (the system of record), so losing Redis or a process
 * never frees a value that an account holds.
 */
export class UniqueRegistry {
  private readonly taken = new Map<string, CompactStringSet>();

  constructor(attributes: string[]) {
    for (const a of attributes) this.taken.set(a, new CompactStringSet());
  }

  /** Records values an existing account holds (arrays: every element). */
  register(attribute: string, value: unknown): void {
    const set = this.taken.get(attribute);
    if (!set || value === undefined || value === null || value === '') return;
    if (Array.isArray(value)) for (const v of value) set.add(String(v));
    else set.add(String(value));
  }

  has(attribute: string, value: string): boolean {
    return this.taken.get(attribute)?.has(value) ?? false;
  }

  /** Takes a value if it is free; false when another account holds it. */
  claim(attribute: string, value: string): boolean {
    let set = this.taken.get(attribute);
    if (!set) {
      set = new CompactStringSet();
      this.taken.set(attribute, set);
    }
    return set.add(value);
  }

  size(attribute: string): number {
    return this.taken.get(attribute)?.size ?? 0;
  }
}
