/**
 * Persistent counters (definition type "counter"). The last issued value per attribute lives in
 * the connector source's connectorAttributes under COUNTERS_KEY. The aggregation flushes the
 * counters it advanced BEFORE it emits the accounts that use them, so a crash after output can
 * never lead to a value being issued twice.
 */
export const COUNTERS_KEY = 'fusionCounters';

export type CounterPersist = (values: Record<string, number>) => Promise<void>;

export class CounterStore {
  private readonly values: Record<string, number>;
  private dirty = false;
  private flushes = 0;

  constructor(
    initial: Record<string, number>,
    private readonly persist: CounterPersist,
  ) {
    this.values = { ...initial };
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
    this.dirty = true;
    return n;
  }

  snapshot(): Record<string, number> {
    return { ...this.values };
  }

  get flushCount(): number {
    return this.flushes;
  }

  /** Persists the state when a counter moved since the last flush. */
  async flush(): Promise<void> {
    if (!this.dirty) return;
    const values = this.snapshot();
    this.dirty = false;
    try {
      await this.persist(values);
      this.flushes++;
    } catch (e) {
      this.dirty = true;
      throw e;
    }
  }
}
