/**
 * The proxy server as an operator starts it, with nothing set but its port and password: a rules
 * aggregation large enough for matching threads is decided in partitions
 * (MATCHING_PARTITIONS is on by default), and MATCHING_PARTITIONS=false gives back the usual matcher
 * with the same outcome. The two runs read two simulators of the same seed (a run's review forms
 * change the tenant). Exact equality of outputs is test/core/aggregation-partitions*.test.ts's.
 */
import { run } from '../../src/cli/serve';
import { defaultParallelism } from '../../src/core/matching/parallel/parallelism';
import { proxyItems, type ProxyItem } from '../../src/proxy-client';
import { ENV_SCHEMA } from '../../src/server/env';
import { startSimulator, type RunningSimulator } from '../../src/simulator';
import { freePort } from '../support/free-port';
import { scaled } from '../support/time-factor';
import { tenantConnection } from '../support/tenant-config';

const PASSWORD = 'e2e-partitions-password-0123456789';

interface Outcome {
  items: ProxyItem[];
  /** The server's log lines (JSON) about how the run matched. */
  matchingLog: string[];
  /** The run's closing counts (its "Aggregation finished" log line). */
  finished: Record<string, unknown>;
}

/** What an administrator writes: a surname that sounds alike and a similar name must both hold. */
const MATCHING = {
  attributes: [
    { attribute: 'lastName', algorithm: 'double-metaphone', threshold: 100, mandatory: true },
    { attribute: 'displayName', algorithm: 'name-matcher', threshold: 80, mandatory: true },
    { attribute: 'email', algorithm: 'jaro-winkler', threshold: 90, mandatory: false },
  ],
};

/** One std:account:list through `fusion-proxy serve` (embedded mode) with `env` on top of a bare environment. */
async function aggregate(env: Record<string, string>): Promise<Outcome> {
  const saved = { ...process.env };
  const stdout: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array, ...rest) => {
    const text = String(chunk);
    if (text.includes('"msg"')) stdout.push(text);
    else return write(chunk, ...(rest as []));
    return true;
  });
  let sim: RunningSimulator | undefined;
  let serving: Promise<void> | undefined;
  try {
    sim = await startSimulator({
      seed: 5,
      // 6,000 identities: a quarter of the 20,000 records threads start from, so the partitions start at
      // the first batch matched (planned-matcher.ts); varied surnames keep the reviews under maxReviewShare.
      tenant: { identities: 6_000, accountsPerSource: 2_000, duplicateRate: 0.1, surnames: 'varied', machineRate: 0 },
      rateLimit: false,
      logRequests: false,
    });
    const port = await freePort();
    // Only what an operator must set: every other variable of the server at its default.
    for (const k of Object.keys(ENV_SCHEMA)) delete process.env[k];
    Object.assign(process.env, { PORT: String(port), HOST: '127.0.0.1', PROXY_PASSWORD: PASSWORD, ...env });
    let exited: string | undefined;
    serving = run([]).then(
      (code) => void (exited = `exited with ${code}`),
      (e: unknown) => void (exited = `failed: ${String(e)}`),
    );
    const url = `http://127.0.0.1:${port}/`;
    // Up once it answers its readiness probe.
    for (let up = false; !up;) {
      if (exited !== undefined) throw new Error(`fusion-proxy serve ${exited} before it was ready`);
      up = await fetch(`${url}readyz`).then(
        (r) => r.ok,
        () => false,
      );
      if (!up) await new Promise((r) => setTimeout(r, 50));
    }
    const items: ProxyItem[] = [];
    const config = { ...tenantConnection(sim), requestsPerSecond: 1000, maxConcurrentRequests: 20, matching: MATCHING };
    for await (const item of proxyItems({ url, password: PASSWORD, type: 'std:account:list', input: {}, config }))
      items.push(item);
    const finished = stdout.find((l) => l.includes('"Aggregation finished"'));
    return {
      items,
      matchingLog: stdout.filter((l) => /partition|Matching/.test(l)),
      finished: JSON.parse(finished ?? '{}') as Record<string, unknown>,
    };
  } finally {
    try {
      if (serving) {
        process.emit('SIGTERM');
        await serving;
      }
    } finally {
      spy.mockRestore();
      process.env = saved;
      await sim?.close();
    }
  }
}

/** The accounts a run created, whatever its random connector keys: each one's source accounts. */
const created = (items: ProxyItem[]): string[] =>
  items.map((i) => JSON.stringify((i.attributes as Record<string, unknown> | undefined)?.accounts)).sort();

describe('fusion-proxy serve at its defaults: a large rules aggregation decided in partitions', () => {
  // MATCHING_THREADS unset: every core the process may use (a container's CPU limit counts), its own among them.
  const { threads } = defaultParallelism();

  it(
    'starts partitions by default, and MATCHING_PARTITIONS=false matches alike with the usual matcher',
    async () => {
      const byDefault = await aggregate({});
      const usual = await aggregate({ MATCHING_PARTITIONS: 'false' });
      const started = byDefault.matchingLog.find((l) => l.includes('as the sources are read'));
      if (threads >= 2) {
        // Up to threads - 1 partitions (fewer where the memory limit leaves no room for more).
        const { partitions } = JSON.parse(started ?? '{}') as { partitions?: number };
        expect(partitions).toBeGreaterThanOrEqual(1);
        expect(partitions).toBeLessThanOrEqual(threads - 1);
      } else expect(started).toBeUndefined();
      expect(usual.matchingLog.some((l) => l.includes('as the sources are read'))).toBe(false);
      // The same accounts created and the same counts sent to review.
      const counts = ({ finished: f }: Outcome) => [f.created, f.emitted, f.potentialDuplicates];
      expect(counts(byDefault)).toEqual(counts(usual));
      expect(byDefault.finished.potentialDuplicates).toBeGreaterThan(100);
      expect(byDefault.items.length).toBeGreaterThan(1_000);
      expect(created(byDefault.items)).toEqual(created(usual.items));
    },
    // Two aggregations through the server: minutes under coverage on a loaded 2-core machine.
    scaled(300_000),
  );
});
