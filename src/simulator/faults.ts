export interface FaultSpec {
  /** HTTP method to match (any when absent). */
  method?: string;
  /** Route template such as '/v3/accounts' or '/v3/accounts/{id}', or a literal path. */
  pathTemplate: string;
  /** Fail starting from the Nth matching request (1-based). */
  nth?: number;
  /** Fail only requests for the Kth page (1-based): offset/limit paging, or the searchAfter page index. */
  page?: number;
  /** How many requests fail once triggered (default 1; Infinity for every one). */
  times?: number;
  /** Status of the error reply (default 500 unless only latency or drop is asked). */
  status?: number;
  /** Retry-After header value for the error reply. */
  retryAfter?: string;
  /** Delay before the request is handled (or failed). */
  latencyMs?: number;
  /** Destroy the socket without replying. */
  drop?: boolean;
  /**
   * Hold the request until `releaseHeld()` (then it is handled normally), so a test can act while a
   * command is certainly in the middle of a platform call, without guessing a latency.
   */
  hold?: boolean;
}

export interface FaultAction {
  status?: number;
  retryAfter?: string;
  latencyMs?: number;
  drop?: boolean;
  hold?: boolean;
}

interface ActiveFault {
  spec: FaultSpec;
  seen: number;
  fired: number;
}

/** Holds injected faults and decides, per request, which one (if any) applies. */
export class FaultInjector {
  private faults: ActiveFault[] = [];
  private held: Array<() => void> = [];
  injected = 0;

  /** A held request's wait: ends at releaseHeld(), or at cancel() when its client leaves. */
  waitForRelease(): { released: Promise<void>; cancel: () => void } {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    this.held.push(release);
    return {
      released,
      cancel: () => {
        this.held = this.held.filter((h) => h !== release);
        release();
      },
    };
  }

  get heldCount(): number {
    return this.held.length;
  }

  /** Lets every held request go on; returns how many were held. */
  releaseHeld(): number {
    const n = this.held.length;
    for (const r of this.held.splice(0)) r();
    return n;
  }

  add(spec: FaultSpec): void {
    if (!spec.pathTemplate) throw new TypeError('injectFault needs a pathTemplate');
    this.faults.push({ spec, seen: 0, fired: 0 });
  }

  clear(): void {
    this.faults = [];
  }

  get active(): number {
    return this.faults.filter((f) => f.fired < (f.spec.times ?? 1)).length;
  }

  /** Returns the first fault that fires for this request; every matching fault counts the request. */
  match(method: string, template: string, path: string, page: number | undefined): FaultAction | undefined {
    let action: FaultAction | undefined;
    for (const f of this.faults) {
      const s = f.spec;
      if (s.method && s.method.toUpperCase() !== method.toUpperCase()) continue;
      if (s.pathTemplate !== template && s.pathTemplate !== path) continue;
      if (s.page !== undefined && s.page !== page) continue;
      f.seen++;
      if (action) continue;
      if (s.nth !== undefined && f.seen < s.nth) continue;
      if (f.fired >= (s.times ?? 1)) continue;
      f.fired++;
      this.injected++;
      const onlyDelay = s.status === undefined && !s.drop && (s.latencyMs !== undefined || s.hold === true);
      action = {
        status: s.drop || onlyDelay ? undefined : (s.status ?? 500),
        retryAfter: s.retryAfter,
        latencyMs: s.latencyMs,
        drop: s.drop,
        hold: s.hold,
      };
    }
    return action;
  }
}
