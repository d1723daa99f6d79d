export interface RequestLogEntry {
  method: string;
  path: string;
  /** Route template, e.g. '/v3/accounts/{id}' (the path itself for unknown routes). */
  template: string;
  /**
   * HTTP status; 0 when the connection was dropped by an injected fault, 499 when the client went away during injected
   * latency.
   */
  status: number;
  clientId?: string;
  at: number;
  query: Record<string, string>;
  durationMs: number;
}

export interface SimulatorCounters {
  requests: number;
  byTemplate: Record<string, number>;
  byStatus: Record<string, number>;
  rateLimited: number;
  faultsInjected: number;
  tokensIssued: number;
  unauthorized: number;
  forbidden: number;
}

const MAX_ENTRIES = 200_000;

/** Request log (bounded: oldest entries go first) and counters, for tests and benchmarks to assert on. */
export class RequestLog {
  private entries: RequestLogEntry[] = [];
  private counts = { requests: 0, rateLimited: 0, unauthorized: 0, forbidden: 0 };
  private byTemplate: Record<string, number> = {};
  private byStatus: Record<string, number> = {};

  constructor(public keepEntries: boolean) {}

  record(e: RequestLogEntry): void {
    this.counts.requests++;
    this.byTemplate[`${e.method} ${e.template}`] = (this.byTemplate[`${e.method} ${e.template}`] ?? 0) + 1;
    this.byStatus[String(e.status)] = (this.byStatus[String(e.status)] ?? 0) + 1;
    if (e.status === 429) this.counts.rateLimited++;
    if (e.status === 401) this.counts.unauthorized++;
    if (e.status === 403) this.counts.forbidden++;
    if (!this.keepEntries) return;
    if (this.entries.length >= MAX_ENTRIES) this.entries.splice(0, MAX_ENTRIES / 10);
    this.entries.push(e);
  }

  list(): RequestLogEntry[] {
    return [...this.entries];
  }

  snapshot(extra: { faultsInjected: number; tokensIssued: number }): SimulatorCounters {
    return { ...this.counts, byTemplate: { ...this.byTemplate }, byStatus: { ...this.byStatus }, ...extra };
  }

  reset(): void {
    this.entries = [];
    this.counts = { requests: 0, rateLimited: 0, unauthorized: 0, forbidden: 0 };
    this.byTemplate = {};
    this.byStatus = {};
  }
}
