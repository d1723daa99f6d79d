import type { PlatformAccount } from '../ports/platform';
import type { IdPool } from './id-pool';
import type { Packed, PackedAccount, RecordPacker } from './packed-account';
import { restoreRepeated } from './repeated-attributes';

/** What the connector accounts of one index share: the packer, and the numbering of keys and source account ids. */
export interface ExistingAccountStore {
  packer: RecordPacker;
  keys: IdPool;
  ids: IdPool;
}

/** What an index keeps of a connector account that no source account has reached yet. */
export interface ExistingAccountState {
  /** Bit 0: disabled; above it, what leaveOutRepeated left out of the packed attributes. */
  flags: number;
  packedAttributes: Packed<Record<string, unknown>>;
  /** Numbers (in store.ids) of its source account ids: one, or a list. */
  numbers: number | number[];
}

/**
 * A connector account read at the start of the run, once a source account (or a review decision)
 * reached it; until then the index keeps only its state (ExistingAccountState) in columns. What
 * the run needs of it stays at hand (key, state, contributors, as numbers of the index's id pools);
 * its attributes and the source accounts read so far are kept packed.
 */
export class ExistingAccount {
  /** Allocated on the first account that has to wait (most connector accounts have one source account). */
  private seenPacked?: PackedAccount[];
  /** The source account that completed it: used right away, so never packed. */
  private last?: PlatformAccount;
  /** Bit 0: disabled; above it, what leaveOutRepeated left out of the packed attributes. */
  private flags: number;
  private packedAttributes: Packed<Record<string, unknown>>;
  /**
   * Numbers of the source account ids it is built from (plus links a review decision adds in this
   * run): most connector accounts have one, kept without an array (about 56 bytes less each).
   */
  private numbers: number | number[];

  constructor(
    private readonly store: ExistingAccountStore,
    /** Number of its key in store.keys. */
    readonly slot: number,
    state: ExistingAccountState,
  ) {
    this.flags = state.flags;
    this.packedAttributes = state.packedAttributes;
    this.numbers = state.numbers;
  }

  /** The account's native identity. */
  get key(): string {
    return this.store.keys.id(this.slot);
  }

  get disabled(): boolean {
    return (this.flags & 1) === 1;
  }

  /** Source account ids it is built from (a fresh copy on every call). */
  get contributors(): string[] {
    const ids = this.store.ids;
    return typeof this.numbers === 'number' ? [ids.id(this.numbers)] : this.numbers.map((n) => ids.id(n));
  }

  /** The attributes as read from the platform (a fresh copy on every call). */
  attributes(): Record<string, unknown> {
    const left = this.flags >> 1;
    const attributes = this.store.packer.unpack(this.packedAttributes);
    return left === 0 ? attributes : restoreRepeated(attributes, left, this.key, this.contributors);
  }

  /** Joins a source account (by its number in store.ids) to it, once: it waits for that account too. */
  addContributor(n: number): void {
    const numbers = typeof this.numbers === 'number' ? [this.numbers] : this.numbers;
    if (numbers.includes(n)) return;
    // The packed attributes may stand for their `accounts` with the ids as read: put them back first.
    if (this.flags >> 1 !== 0) {
      this.packedAttributes = this.store.packer.pack(this.attributes());
      this.flags &= 1;
    }
    this.numbers = [...numbers, n];
  }

  /** Its source accounts read so far in this run, in the order read. */
  seen(): PlatformAccount[] {
    const seen = (this.seenPacked ?? []).map((p) => this.store.packer.unpackAccount(p));
    if (this.last) seen.push(this.last);
    return seen;
  }

  /** Records a source account read; true once all of its contributors were read. */
  addSeen(account: PlatformAccount): boolean {
    const count = typeof this.numbers === 'number' ? 1 : this.numbers.length;
    if ((this.seenPacked?.length ?? 0) + 1 < count) {
      (this.seenPacked ??= []).push(this.store.packer.packAccount(account));
      return false;
    }
    if (this.last) (this.seenPacked ??= []).push(this.store.packer.packAccount(this.last));
    this.last = account;
    return true;
  }
}
