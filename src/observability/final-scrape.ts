/**
 * A process that stops right after its last job (a scale-in, a rollout) must still be scraped once
 * more: otherwise that job's counters (a success, a failure, a scale-in abort) never reach
 * Prometheus, and a failed aggregation raises no alert. The metrics routes note each scrape; the
 * command execution notes each finished job; the shutdown waits for a scrape that came after the
 * last job, bounded, and only when something scrapes this process at all.
 */
let lastScrapeAt: number | undefined;
let lastActivityAt: number | undefined;
const waiters = new Set<() => void>();

/** A scrape was served, its counters read from `startedAt` (performance.now()). */
export function noteScrape(startedAt: number): void {
  lastScrapeAt = startedAt;
  for (const w of waiters) w();
}

/** Counters changed now (a job finished): the next scrape is the one that carries it. */
export function noteActivity(): void {
  lastActivityAt = performance.now();
}

/** Whether counters changed since the last scrape, and something does scrape this process. */
export function scrapePending(): boolean {
  return lastScrapeAt !== undefined && lastActivityAt !== undefined && lastActivityAt >= lastScrapeAt;
}

/**
 * Resolves once a scrape has carried the last change (at once when none is pending, or nothing
 * scrapes this process), or after `maxMs`. Says which.
 */
export function awaitFinalScrape(maxMs: number): Promise<'scraped' | 'none-pending' | 'timeout'> {
  if (!scrapePending()) return Promise.resolve('none-pending');
  return new Promise((resolve) => {
    const done = (how: 'scraped' | 'timeout'): void => {
      clearTimeout(timer);
      waiters.delete(onScrape);
      resolve(how);
    };
    const onScrape = (): void => {
      if (!scrapePending()) done('scraped');
    };
    const timer = setTimeout(() => done('timeout'), Math.max(0, maxMs));
    timer.unref();
    waiters.add(onScrape);
  });
}
