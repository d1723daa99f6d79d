/**
 * Persistent counters (definition type "counter"). The last issued value per attribute lives in
 * the connector source's connectorAttributes under COUNTERS_KEY. The aggregation flushes the
 * counters it advanced BEFORE it emits the accounts that use them, so a crash after output can
 * never lead to a value being issued twice.
 *
 * A run writes ahead of what it issues (`reserveUpTo`): a write covers the values issued so far and
 * as many again (at most `reserveUpTo`), so the batches that follow issue from that block without a
 * platform call, and the run writes the exact values once at its end (`release`). One write per
 * batch was a third of a 100k run's platform calls (about 400 `PATCH /v3/sources/{id}` beside 400
 * pages of accounts and 400 of identities), against a rate limit that bounds real tenants (#27). The
 * price: a run that fails before its end leaves the rest of its block unused (a gap of at most
 * `reserveUpTo` values per counter), never a value issued twice.
 */
import { errorMessage } from '../errors';
import type { Logger } from '../ports/logger';

export const COUNTERS_KEY = 'fusionCounters';

export type CounterPersist = (values: Record<string, number>) => Promise<void>;

/** The largest block an aggregation writes ahead per counter. */
export const COUNTER_RESERVE = 1_000;

export class CounterStore {
  private readonly values: Record<string, number>;
  /** What the platform holds per counter: the last value issued, or written ahead. */
  private persisted: Record<string, number>;
  /** Values each counter issued in this store's life. */
  private readonly issued: Record<string, number> = {};
  private flushes = 0;

  constructor(
    initial: Record<string, number>,
    private readonly persist: CounterPersist,
    /** 0: every write is exact (a single account's create writes once). */
    private readonly reserveUpTo = 0,
  ) {
    this.values = { ...initial };
    this.persisted = { ...initial };
  }

  /** Reads the persisted state from connectorAttributes, ignoring malformed entries. */
  static readState(connectorAttributes: Record<string, unknown>): Record<string, number> {
    const raw = connectorAttributes[COUNTERS_KEY];
    const out: Record<string, number> = {};
    if (raw && typeof raw === 'object' && !Array.isArray(raw)) {
      for (const [k, v] of Object.entries(raw as Record<string, unknown>)) {
        const n = typeof v === 'number' ? v : Number(v);
        if (Number.isInteger(n)) out[k] = n;
      }
    }
    return out;
  }

  next(attribute: string, start: number): number {
    const last = this.values[attribute];
    const n = last === undefined || last < start - 1 ? start : last + 1;
    this.values[attribute] = n;
    this.issued[attribute] = (this.issued[attribute] ?? 0) + 1;
    return n;
  }

  snapshot(): Record<string, number> {
    return { ...this.values };
  }

  /** Platform writes so far. */
  get flushCount(): number {
    return this.flushes;
  }

  /**
   * Makes the platform hold every value issued so far: nothing to write while they are within the block
   * written last. The first write of a store is exact (a run with one batch writes once); later ones
   * write ahead by as many values as the counter issued, at most `reserveUpTo`.
   */
  async flush(): Promise<void> {
    if (this.covered()) return;
    const ahead = this.flushes > 0 ? this.reserveUpTo : 0;
    const values: Record<string, number> = {};
    for (const [a, v] of Object.entries(this.values)) values[a] = v + Math.min(ahead, this.issued[a] ?? 0);
    await this.write(values);
  }

  /**
   * At the run's end: the exact values, where the platform holds values written ahead. The one write that lowers
   * them, so only over this store's own last write (`current`: what the platform holds now): a run that took over
   * meanwhile (this one's lock lapsed while it waited on the platform) issued past them, and its values stay.
   */
  async release(current: () => Promise<Record<string, number>>): Promise<'exact' | 'released' | 'superseded'> {
    if (sameValues(this.values, this.persisted)) return 'exact';
    if (!sameValues(await current(), this.persisted)) return 'superseded';
    await this.write(this.snapshot());
    return 'released';
  }

  private covered(): boolean {
    return Object.entries(this.values).every(([a, v]) => (this.persisted[a] ?? Number.NEGATIVE_INFINITY) >= v);
  }

  private async write(values: Record<string, number>): Promise<void> {
    await this.persist(values);
    this.persisted = values;
    this.flushes++;
  }
}

function sameValues(a: Record<string, number>, b: Record<string, number>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => a[k] === b[k]);
}

/**
 * The run's end: the counters' exact values back on the source (`source`: its connectorAttributes now). Every
 * account has left, so a failure costs the counters a gap (the values written ahead stay unused), never a value
 * issued twice: a warning, not a failed run.
 */
export async function releaseCounters(
  counters: CounterStore,
  source: () => Promise<Record<string, unknown>>,
  logger: Logger,
): Promise<void> {
  try {
    const outcome = await counters.release(async () => CounterStore.readState(await source()));
    if (outcome === 'superseded')
      logger.warn(
        'The counters on the source changed since this run last wrote them (another run?): they are left as they are, and the values this run wrote ahead stay unused',
      );
  } catch (e) {
    logger.warn(
      { err: errorMessage(e) },
      'Could not write the counters back to the values issued: the values this run wrote ahead stay unused (a gap in the counters, no value issued twice)',
    );
  }
}
