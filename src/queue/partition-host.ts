/**
 * Decides one partition of a run in this process (issue 27): replays the partition's inbound stream
 * from its start into a partition thread and writes what the thread says to the run's outbound stream,
 * numbered. The thread's answers depend only on what it is told, in order, so a host that replays the
 * same stream says the same things again: the run keeps the first of each number.
 *
 * A host holds its partition's claim while it runs, renewed every third of its TTL and token-checked.
 * A process that dies lets the claim lapse; whoever claims the partition next (another worker's retry
 * of the job, or the run's own process: queue-partition-run.ts) replays the stream. A graceful stop gives
 * the claim back, so that the partition is taken over at the run's next check.
 */
import { Redis, type RedisOptions } from 'ioredis';
import type { PartitionStart } from '../core/aggregation/partition-decisions';
import type { PartitionThread, StartPartition } from '../core/aggregation/partition-thread';
import type { MatchRecord } from '../core/matching/types';
import type { PartitionOutbound } from '../core/aggregation/partition-thread';
import type { RunLock } from '../core/ports/run-lock';
import { FIELD, decodeInbound, encodeMessage, streamEntries, type HostInbound } from './partition-messages';
import { PARTITION_KEY_TTL_MS, partitionKeys, type PartitionKeys } from './partition-keys';
import { closeConnection } from './redis-close';
import { partitionClaims } from './partition-claims';

/**
 * An answer goes out only while its host holds the claim (KEYS[1] the claim, KEYS[2] the outbound
 * stream): a host that lost it (stalled past its TTL, or its run ended and deleted the claims) writes
 * nothing, so it never recreates a deleted stream; every write refreshes the stream's TTL.
 */
const SAY = `if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('XADD', KEYS[2], '*', ARGV[2], ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
return 1`;
/** Messages a read takes at once: few, so a replay of a large baseline leaves the claim's renewal its turns. */
const COUNT = 20;
const BLOCK_MS = 5_000;

/** Longer than any blocking read's BLOCK. */
const READER_TIMEOUT_MS = 20_000;

/** A connection for one reader of partition streams (a host's, a run's): blocking reads, nothing else. */
export function openReader(url: string, options: RedisOptions = {}): Redis {
  return new Redis(url, {
    ...options,
    maxRetriesPerRequest: null,
    disconnectTimeout: 200,
    // A blocking read answers within its BLOCK: a socket gone silent (half-open) fails instead of waiting for good.
    commandTimeout: READER_TIMEOUT_MS,
  });
}

export interface PartitionHostDeps {
  /** Writes and claim renewals (a shared connection). */
  redis: Redis;
  /** The host's own connection for its blocking reads; the host closes it. */
  reader: Redis;
  startPartition: StartPartition;
  /** The partition queue's key space (partitionSpace()). */
  space: string;
  claimTtlMs: number;
  /** How long a read waits before the host checks that its run still lives. */
  blockMs?: number;
  /**
   * Tests: whether the answer numbered `seq` is lost, as a write that fails; the host learns it once its
   * next answer went out (writes are pipelined), and gives the partition up.
   */
  loses?: (part: number, seq: number) => boolean;
}

type Sayer = Redis & {
  fusionPartitionSay(claim: string, out: string, token: string, field: string, m: Buffer, ttl: number): Promise<number>;
};

/**
 * Why a host ended: its run ended; its run is gone (no meta: its owner died); another holds the claim;
 * it was stopped; it failed (it said so in the outbound stream, or could not write there).
 */
export const HOST_ENDS = ['ended', 'run_gone', 'claim_lost', 'stopped', 'failed'] as const;
export type HostEnd = (typeof HOST_ENDS)[number];

export class PartitionHost {
  private readonly keys: PartitionKeys;
  private readonly claims: RunLock;
  private stopped: { release: boolean } | undefined;
  private failed = false;
  /** Another holds the claim now. */
  private lost = false;
  /** The replay ended: nothing more goes out. */
  private done = false;
  /** Tests: an answer was lost (loses); the host learns it as the next one goes out. */
  private losing = false;
  private thread: PartitionThread | undefined;
  private start: Omit<PartitionStart, 'baseline'> | undefined;
  private baseline: MatchRecord[] = [];
  private seq = 0;
  private renewal: NodeJS.Timeout | undefined;

  constructor(
    private readonly deps: PartitionHostDeps,
    readonly runId: string,
    readonly part: number,
    private readonly token: string,
  ) {
    this.keys = partitionKeys(deps.space, runId);
    this.claims = partitionClaims(deps.redis);
    if (!('fusionPartitionSay' in deps.redis))
      deps.redis.defineCommand('fusionPartitionSay', { numberOfKeys: 2, lua: SAY });
  }

  /** Decides the partition until its run ends (or the host stops); resolves with why it ended. */
  async run(): Promise<HostEnd> {
    const { deps, keys } = this;
    this.renewal = setInterval(() => void this.renew(), Math.max(1, Math.floor(deps.claimTtlMs / 3)));
    let end: HostEnd = 'stopped';
    try {
      end = await this.replay();
    } finally {
      this.done = true;
      clearInterval(this.renewal);
      await this.thread?.close();
      const release = end !== 'claim_lost' && (this.stopped === undefined || this.stopped.release);
      if (release) await this.claims.release(keys.claim(this.part), this.token).catch(() => false);
      await closeConnection(deps.reader);
    }
    return end;
  }

  /**
   * Stops the host now. `release`: gives the claim back (a graceful stop: the run takes the partition
   * over at its next check); without it the claim lapses as a dead process's does.
   */
  stop(release: boolean): void {
    this.stopped ??= { release };
    // Ends a blocking read at once.
    this.deps.reader.disconnect();
  }

  private async replay(): Promise<HostEnd> {
    const { deps, keys } = this;
    let last = '0';
    while (!this.stopped && !this.failed) {
      let reply;
      try {
        reply = await deps.reader.xreadBuffer(
          'COUNT',
          COUNT,
          'BLOCK',
          deps.blockMs ?? BLOCK_MS,
          'STREAMS',
          keys.inbound(this.part),
          last,
        );
      } catch (e) {
        if (this.stopped || this.failed) break;
        throw e;
      }
      const entries = streamEntries(reply as Parameters<typeof streamEntries>[0]);
      if (entries.length === 0) {
        if (!(await deps.redis.exists(keys.meta))) return 'run_gone';
        continue;
      }
      for (const [id, bytes] of entries) {
        last = id;
        const m = decodeInbound(bytes);
        if (m.type === 'end') return 'ended';
        this.handle(m);
        if (this.stopped || this.failed) break;
      }
    }
    return this.failed ? 'failed' : this.lost ? 'claim_lost' : 'stopped';
  }

  private handle(m: Exclude<HostInbound, { type: 'end' }>): void {
    if (m.type === 'start') this.start = m.start;
    else if (m.type === 'baseline') for (const r of m.records) this.baseline.push(r);
    else {
      const thread = this.thread ?? this.begin();
      if (m.type === 'work') thread.take(m.work);
      else thread.import(m.batch, m.records);
    }
  }

  /** The partition's thread, over the baseline told so far (all of it comes before the first batch). */
  private begin(): PartitionThread {
    if (!this.start) throw new Error(`partition ${this.part} of run ${this.runId}: a batch came before its start`);
    const baseline = this.baseline;
    this.baseline = [];
    this.thread = this.deps.startPartition(
      { ...this.start, baseline },
      {
        decided: (decided) => this.say({ type: 'batch', decided }),
        exported: (to, batch, records) => this.say({ type: 'export', to, batch, records }),
      },
      (error) => {
        this.say({ type: 'error', message: error.message });
        this.failed = true;
        this.deps.reader.disconnect();
      },
    );
    return this.thread;
  }

  private say(message: PartitionOutbound): void {
    if (this.stopped || this.failed || this.done) return;
    const { deps, keys } = this;
    const seq = this.seq++;
    // A message lost: the run cannot take the ones after it. The host gives the partition up, and
    // whoever takes it over says it again.
    const lose = (): void => {
      if (!this.stopped) this.stop(true);
    };
    // Writes are pipelined: a failure comes back after later answers left (a test's lost one, with the next).
    if (deps.loses?.(this.part, seq)) return void (this.losing = true);
    const bytes = encodeMessage({ part: this.part, seq, message });
    (deps.redis as Sayer)
      .fusionPartitionSay(keys.claim(this.part), keys.outbound, this.token, FIELD, bytes, PARTITION_KEY_TTL_MS)
      .then((said) => {
        if (said === 0 && !this.stopped) {
          this.lost = true;
          this.stop(false);
        }
      }, lose);
    if (this.losing) lose();
  }

  private async renew(): Promise<void> {
    const { deps, keys } = this;
    try {
      const held = await this.claims.renew(keys.claim(this.part), this.token, deps.claimTtlMs);
      // Another holds the partition now (this process stalled past the claim): it says the same things.
      if (!held && !this.stopped) {
        this.lost = true;
        this.stop(false);
      }
    } catch {
      // Redis away: the claim lapses unless it comes back in time; then another takes the partition over.
    }
  }
}
