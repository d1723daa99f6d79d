/**
 * A rules run decided in partitions across worker processes (queue mode, issue 27): each partition is a
 * job any worker process takes, and the run's output is the one-thread run's, item for item, same-run
 * duplicates read far apart included, whoever decides its partitions: two workers, none (the run
 * decides them itself), or a worker that dies or stops holding one (another replays it). Nothing is
 * left in Redis. Real Redis, real BullMQ workers, real partition threads (in this process: each
 * PartitionJobWorker stands for a worker process).
 */
import type { Redis } from 'ioredis';
import { METRIC } from '../../src/observability/metric-names';
import { registry } from '../../src/observability/metrics-registry';
import { startPartitionThread, type StartPartition } from '../../src/core/aggregation/partition-thread';
import { liveMatchingThreads } from '../../src/core/matching/parallel/worker-shard';
import { PartitionJobWorker, type PartitionJobWorkerOptions } from '../../src/queue/partition-job-worker';
import { QueuePartitionProvider, type QueuePartitionProviderOptions } from '../../src/queue/queue-partition-provider';
import { PartitionReservations } from '../../src/queue/partition-reservations';
import { CandidateDirectory } from '../../src/core/aggregation/candidate-directory';
import { context, failure, type LogLine } from '../core/support';
import { createAccountListCommand } from '../../src/core/commands/account-commands';
import {
  ONE,
  aggregate,
  expectSameOutput,
  partitioned,
  started,
  tenant,
  type Output,
  type Tenant,
} from '../core/partitions-tenant';
import { openRedis, redisUrl, uniquePrefix } from '../support/redis';
import { scaled } from '../support/time-factor';
import { until } from '../support/until';

let redis: Redis;
let prefix: string;
const workers: PartitionJobWorker[] = [];
const providers: QueuePartitionProvider[] = [];
/** What each job of the test returned (why its host ended, or why it decided nothing). */
let outcomes: string[];

beforeAll(() => {
  redis = openRedis();
});
afterAll(async () => {
  await redis.quit();
});
beforeEach(() => {
  prefix = uniquePrefix('part');
  outcomes = [];
});
afterEach(async () => {
  for (const w of workers.splice(0)) await w.close();
  for (const p of providers.splice(0)) await p.close();
  expect(liveMatchingThreads()).toBe(0);
});

function provider(extra: Partial<QueuePartitionProviderOptions> = {}): QueuePartitionProvider {
  const p = new QueuePartitionProvider({ redisUrl: redisUrl(), prefix, partitions: 2, ...extra });
  providers.push(p);
  return p;
}

function worker(
  startPartition: StartPartition = startPartitionThread,
  extra: Partial<PartitionJobWorkerOptions> = {},
): PartitionJobWorker {
  const w = new PartitionJobWorker({
    redisUrl: redisUrl(),
    prefix,
    logger: context().logger,
    // One partition at a time: two jobs, two workers, one each.
    concurrency: 1,
    claimTtlMs: 1_000,
    startPartition,
    // Whatever the test machine's container allows (the tests count takeovers); tests of the limit set one.
    memoryLimit: undefined,
    ...extra,
  });
  w.worker.on('completed', (_job, result: string) => outcomes.push(result));
  workers.push(w);
  return w;
}

const EXTRA = { enableBatching: true, batchSize: 50 };
/** Partitions only (no thread of the run's own process besides its own). */
const REMOTE = { threads: 1, minRecords: 0, partitions: true };

function remoteTenant(p: QueuePartitionProvider): Tenant {
  const t = tenant(REMOTE, EXTRA);
  t.h.deps.remotePartitions = p;
  return t;
}

/** A counter's value in this process (summed over its labels, or the one labelled `outcome`). */
async function counter(name: string, outcome?: string): Promise<number> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
  const values = (metric?.values ?? []) as { value: number; labels: Record<string, unknown> }[];
  return values.filter((v) => outcome === undefined || v.labels.outcome === outcome).reduce((s, v) => s + v.value, 0);
}

/** A ledger that remembers the most it held at once. */
class RecordingReservations extends PartitionReservations {
  peak = 0;
  override reserve(bytes: number): () => void {
    const release = super.reserve(bytes);
    this.peak = Math.max(this.peak, this.total);
    return release;
  }
}

let reference: Promise<Output> | undefined;
/** The one-thread run's output (the same tenant every time: computed once). */
function oneThread(): Promise<Output> {
  reference ??= aggregate(tenant(ONE, EXTRA)).then(({ raw: _raw, ...out }) => out);
  return reference;
}

/** The run's keys left in Redis (every run deletes its own). */
const leftovers = (): Promise<string[]> => redis.keys(`fusion:part:${prefix}:*`);

const takenOver = (lines: LogLine[]): string[] =>
  lines.filter((l) => /^Matching partition \d+ is decided in this process/.test(l.msg)).map((l) => l.msg);

describe('how many partitions a run hands out', () => {
  it('none while this process alone serves the queue; then the slots of every process serving it; or as set', async () => {
    worker();
    const p = provider({ partitions: undefined, slots: 3 });
    await p.ready();
    // This process's own threads decide them: no trip through Redis.
    expect(p.parts()).toBe(0);
    worker();
    // Once the second process's worker is connected and counted.
    await until('two processes serving the queue', async () => (await p.ready(), p.parts() > 0));
    expect(p.parts()).toBe(6);
    expect(provider({ partitions: 5 }).parts()).toBe(5);
  });
});

describe('partitions as child jobs', () => {
  it(
    'two worker processes take one partition each: the same items and review forms as one thread, nothing left in Redis',
    async () => {
      const one = await oneThread();
      // One under a memory limit with room for a partition: it takes one as the other does.
      worker(startPartitionThread, { memoryLimit: 8 * 2 ** 30 });
      worker();
      // The run never takes a partition over while two idle workers serve the queue.
      const p = provider({ checkMs: 600_000 });
      await p.ready();
      const lines: LogLine[] = [];
      const t = remoteTenant(p);
      const byId = jest.spyOn(CandidateDirectory.prototype, 'details');
      const lookedUp = new Set<string>();
      const { raw: _many, ...many } = await aggregate(t, lines).finally(() => {
        for (const [id] of byId.mock.calls) lookedUp.add(id);
        byId.mockRestore();
      });
      // The candidates' directory rows crossed Redis both ways: no identity was looked up by its id.
      expect([...t.names].filter(([id, name]) => /^i\d+$/.test(name) && lookedUp.has(id))).toEqual([]);
      expect(partitioned(lines)).toBe(`${started(2)} (child jobs that any worker process takes)`);
      expect(lines.find((l) => l.msg.startsWith(started(2)))?.fields).toMatchObject({ partitions: 2, childJobs: true });
      expectSameOutput(many, one);
      expect(one.reviews.length).toBeGreaterThanOrEqual(20);
      expect(one.sameRun).toBeGreaterThanOrEqual(10);
      expect(takenOver(lines)).toEqual([]);
      await until('both partition jobs to end', () => outcomes.length === 2);
      // Each worker decided a partition until the run told it that it had ended.
      expect(outcomes).toEqual(['ended', 'ended']);
      expect(await leftovers()).toEqual([]);
    },
    scaled(120_000),
  );

  it(
    'no worker process serves the partition queue: the run decides its partitions itself, the same output',
    async () => {
      const one = await oneThread();
      const p = provider({ checkMs: 100, claimTtlMs: 1_000 });
      const lines: LogLine[] = [];
      const { raw: _many, ...many } = await aggregate(remoteTenant(p), lines);
      expectSameOutput(many, one);
      expect(takenOver(lines).sort()).toEqual([
        'Matching partition 0 is decided in this process: no other worker process holds it (none took it yet, or the one that did stopped)',
        'Matching partition 1 is decided in this process: no other worker process holds it (none took it yet, or the one that did stopped)',
      ]);
      expect(await leftovers()).toEqual([]);
    },
    scaled(120_000),
  );

  it(
    'a worker whose memory limit leaves no room for a partition leaves it to its run: the same output, the reason logged',
    async () => {
      const one = await oneThread();
      const workerLines: LogLine[] = [];
      // 1 GiB, of which the process uses all but 100 MiB: a partition's thread alone takes 64 MiB of the 80 % planned.
      worker(startPartitionThread, {
        memoryLimit: 2 ** 30,
        usedBytes: () => 2 ** 30 - 100 * 2 ** 20,
        logger: context(workerLines).logger,
        reservations: new PartitionReservations(),
      });
      const p = provider({ checkMs: 100, claimTtlMs: 1_000 });
      await p.ready();
      const noRoom = await counter(METRIC.partitionJobs, 'no_room');
      const lines: LogLine[] = [];
      const { raw: _many, ...many } = await aggregate(remoteTenant(p), lines);
      expectSameOutput(many, one);
      expect(takenOver(lines)).toHaveLength(2);
      await until('both partition jobs to end', () => outcomes.length === 2);
      expect(outcomes).toEqual(['no_room', 'no_room']);
      expect(await counter(METRIC.partitionJobs, 'no_room')).toBe(noRoom + 2);
      const left = workerLines.map((l) => l.msg).filter((m) => m.includes("is left to its run's process"));
      expect(left).toHaveLength(2);
      expect(left[0]).toMatch(
        /^Matching partition \d of run [0-9a-f-]+ is left to its run's process: its [\d,]+ records need about \d+ MiB, and this process uses 924 MiB of its 1,024 MiB memory limit$/,
      );
      expect(await leftovers()).toEqual([]);
    },
    scaled(120_000),
  );

  it(
    'a worker with room for one partition takes one: the other, taken at the same time, is left to its run',
    async () => {
      const one = await oneThread();
      const limit = 2 ** 30;
      // Room (80 % of the limit planned) for one partition's thread of 64 MiB and its records, not two.
      worker(startPartitionThread, {
        concurrency: 2,
        memoryLimit: limit,
        usedBytes: () => 0.8 * limit - 96 * 2 ** 20,
        reservations: new PartitionReservations(),
      });
      const p = provider({ checkMs: 1_000, claimTtlMs: 1_000, reservations: new PartitionReservations() });
      await p.ready();
      const lines: LogLine[] = [];
      const { raw: _many, ...many } = await aggregate(remoteTenant(p), lines);
      expectSameOutput(many, one);
      await until('both partition jobs to end', () => outcomes.length === 2);
      // Never both: one left for want of room; the other decided here (or, on a slow machine, by the run first).
      expect(outcomes.filter((o) => o === 'no_room')).toHaveLength(1);
      const ended = outcomes.filter((o) => o === 'ended').length;
      expect(ended + outcomes.filter((o) => o === 'held').length).toBe(1);
      expect(takenOver(lines)).toHaveLength(2 - ended);
      expect(await leftovers()).toEqual([]);
    },
    scaled(120_000),
  );

  it('partitions this process decides hold their room until they end: a job finds none meanwhile', async () => {
    const ledger = new RecordingReservations();
    const limit = 2 ** 30;
    // Room for one partition, were nothing reserved.
    worker(startPartitionThread, {
      memoryLimit: limit,
      usedBytes: () => 0.8 * limit - 96 * 2 ** 20,
      reservations: ledger,
    });
    const release = ledger.reserve(64 * 2 ** 20);
    const one = await oneThread();
    const p = provider({ checkMs: 100, claimTtlMs: 1_000, reservations: ledger });
    await p.ready();
    const lines: LogLine[] = [];
    const { raw: _many, ...many } = await aggregate(remoteTenant(p), lines);
    expectSameOutput(many, one);
    await until('both partition jobs to end', () => outcomes.length === 2);
    expect(outcomes.filter((o) => o === 'no_room').length + outcomes.filter((o) => o === 'held').length).toBe(2);
    // The run's two takeovers reserved their partitions' room beside the 64 MiB, and gave it back.
    expect(takenOver(lines)).toHaveLength(2);
    expect(ledger.peak).toBeGreaterThan(64 * 2 ** 20 + 2 * 64 * 2 ** 20);
    release();
    expect(ledger.total).toBe(0);
  });

  for (const [how, dies] of [
    ['dies (its claim lapses)', true],
    ['stops gracefully (it gives the partition back)', false],
  ] as const) {
    it(
      `a worker holding a partition ${how} mid-run: the run replays it, the same output, nothing said twice`,
      async () => {
        const one = await oneThread();
        let stopped = false;
        // The third batch it decides is never said: the worker stops first.
        const stopping: StartPartition = (start, out, onEnd) => {
          let decided = 0;
          return startPartitionThread(
            start,
            {
              decided: (d) => {
                if (++decided === 3 && !stopped) {
                  stopped = true;
                  void mortal.close(dies);
                }
                if (!stopped || decided < 3) out.decided(d);
              },
              exported: (to, batch, records) => out.exported(to, batch, records),
            },
            onEnd,
          );
        };
        const mortal = worker(stopping);
        worker();
        const p = provider({ checkMs: 100, claimTtlMs: 1_000 });
        await p.ready();
        const takeovers = await counter(METRIC.partitionTakeovers);
        const stoppedJobs = await counter(METRIC.partitionJobs, 'stopped');
        const lines: LogLine[] = [];
        const { raw: _many, ...many } = await aggregate(remoteTenant(p), lines);
        expect(await counter(METRIC.partitionTakeovers)).toBe(takeovers + 1);
        // One that stops counts its partition given back (one that dies, here in this process, too).
        await until(
          'the stopped job to end',
          async () => (await counter(METRIC.partitionJobs, 'stopped')) > stoppedJobs,
        );
        expect(stopped).toBe(true);
        expectSameOutput(many, one);
        // The other worker's one slot holds its own partition: the run itself decided the stopped one again.
        expect(takenOver(lines)).toHaveLength(1);
        expect(await leftovers()).toEqual([]);
      },
      scaled(120_000),
    );
  }

  it("a partition that fails in its worker fails the run with the partition's error, nothing left in Redis", async () => {
    const failing: StartPartition = (start, out, onEnd) =>
      startPartitionThread(
        start,
        {
          decided: (d) => {
            out.decided(d);
            onEnd(new Error('out of memory (simulated)'));
          },
          exported: (to, batch, records) => out.exported(to, batch, records),
        },
        onEnd,
      );
    worker(failing);
    worker(failing);
    const p = provider({ checkMs: 600_000 });
    await p.ready();
    const t = remoteTenant(p);
    const err = await failure(createAccountListCommand(t.h.deps)({}, t.h.config, context()));
    expect(err.code).toBe('MATCHING_PARTITION_FAILED');
    expect(err.message).toMatch(/^matching partition \d: out of memory \(simulated\)$/);
    await until('both partition jobs to end', () => outcomes.length === 2);
    // The first to fail ends the run; the other may have been told the run ended before it failed.
    expect(outcomes).toContain('failed');
    for (const o of outcomes) expect(['failed', 'ended']).toContain(o);
    expect(await leftovers()).toEqual([]);
  });

  it('an answer lost on its way (a write that failed): its worker gives the partition up, the run replays it, the same output', async () => {
    const one = await oneThread();
    let lost = 0;
    // Each worker loses its partition's fourth answer once; the fifth still goes out (writes are pipelined).
    const losesOnce = (): ((part: number, seq: number) => boolean) => {
      let done = false;
      return (_part, seq) => {
        if (done || seq !== 3) return false;
        done = true;
        lost++;
        return true;
      };
    };
    worker(startPartitionThread, { loses: losesOnce() });
    worker(startPartitionThread, { loses: losesOnce() });
    const p = provider({ checkMs: 100, claimTtlMs: 1_000 });
    await p.ready();
    const lines: LogLine[] = [];
    const { raw: _many, ...many } = await aggregate(remoteTenant(p), lines);
    expect(lost).toBe(2);
    expectSameOutput(many, one);
    expect(takenOver(lines)).toHaveLength(2);
    expect(await leftovers()).toEqual([]);
  });

  it('answers that can never be written: the run fails clearly after 3 takeovers, it does not wait for good', async () => {
    const always = (part: number, seq: number): boolean => part === 0 && seq === 3;
    worker(startPartitionThread, { loses: always });
    worker(startPartitionThread, { loses: always });
    const p = provider({ checkMs: 100, claimTtlMs: 1_000, loses: always });
    await p.ready();
    const t = remoteTenant(p);
    const lines: LogLine[] = [];
    const err = await failure(createAccountListCommand(t.h.deps)({}, t.h.config, context(lines)));
    expect(err.code).toBe('MATCHING_PARTITION_FAILED');
    expect(err.message).toBe(
      'matching partition 0: it said nothing new over 3 takeovers: its answers cannot be written',
    );
    expect(takenOver(lines).filter((l) => l.startsWith('Matching partition 0 '))).toHaveLength(3);
    expect(await leftovers()).toEqual([]);
  });

  it('a cancelled run ends its partitions and leaves nothing in Redis', async () => {
    worker();
    worker();
    const p = provider({ checkMs: 600_000 });
    await p.ready();
    const t = remoteTenant(p);
    const ac = new AbortController();
    const lines: LogLine[] = [];
    const iter = createAccountListCommand(t.h.deps)({}, t.h.config, context(lines, ac.signal));
    const seen: unknown[] = [];
    const err = await failure(
      (async function* () {
        for await (const item of iter) {
          seen.push(item);
          if (seen.length === 60) ac.abort();
          yield item;
        }
      })(),
    );
    expect(err.code).toBe('COMMAND_CANCELLED');
    expect(partitioned(lines)).toBe(`${started(2)} (child jobs that any worker process takes)`);
    await until('both partition jobs to end', () => outcomes.length === 2);
    expect(await leftovers()).toEqual([]);
  });
});
