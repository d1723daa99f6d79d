import type { CommandRunner } from '../core/command-runner';
import type { Logger } from '../core/ports/logger';
import type { CommandDispatcher, OutputChunk, ProxyCommand, Readiness } from './command-dispatcher';
import { laneOf, type CommandLane } from './command-lanes';
import { executeCommand } from './command-execution';
import { InMemoryChannel } from './in-memory-channel';
import { SlotPool } from './slot-pool';
import { initErrorSeries } from '../observability/error-metrics';
import { initJobSeries } from './metrics';

export interface EmbeddedDispatcherOptions {
  runner: CommandRunner;
  logger: Logger;
  /** Long commands (aggregations) run at once; more wait for a slot (that wait counts against the request timeout). */
  concurrency: number;
  /** Quick commands (test connection, single-account commands) run at once, in slots of their own. */
  quickConcurrency: number;
  requestTimeoutMs: number;
  chunkBytes?: number;
  maxBacklogBytes?: number;
}

/** Embedded mode (no REDIS_URL): commands run in this process through a bounded in-memory channel. */
export class EmbeddedDispatcher implements CommandDispatcher {
  readonly mode = 'embedded' as const;
  private readonly slots: Record<CommandLane, SlotPool>;
  private readonly runs = new Set<Promise<unknown>>();
  private readonly open = new Set<InMemoryChannel>();
  private finishedMaxBacklog = 0;

  /** Largest unread backlog of any channel so far, open ones included, in bytes (tests and benchmark). */
  get maxBacklogSeen(): number {
    let max = this.finishedMaxBacklog;
    for (const c of this.open) max = Math.max(max, c.maxBacklogSeen);
    return max;
  }

  constructor(private readonly opts: EmbeddedDispatcherOptions) {
    this.slots = { long: new SlotPool(opts.concurrency), quick: new SlotPool(opts.quickConcurrency) };
    initJobSeries();
    initErrorSeries('embedded');
  }

  async *dispatch(cmd: ProxyCommand, signal: AbortSignal): AsyncGenerator<OutputChunk> {
    const channel = new InMemoryChannel({
      chunkBytes: this.opts.chunkBytes ?? 64 * 1024,
      maxBacklogBytes: this.opts.maxBacklogBytes ?? 1024 * 1024,
    });
    this.open.add(channel);
    const controller = new AbortController();
    const onAbort = (): void => controller.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    let finished = false;
    const slots = this.slots[laneOf(cmd.type)];
    const run = (async () => {
      await slots.acquire(controller.signal);
      try {
        channel.progress();
        await executeCommand(this.opts.runner, cmd, channel, {
          signal: controller.signal,
          logger: this.opts.logger,
          component: 'embedded',
        });
      } finally {
        slots.release();
      }
    })().catch(() => undefined);
    this.runs.add(run);
    void run.finally(() => this.runs.delete(run));
    try {
      yield* channel.read(controller.signal, this.opts.requestTimeoutMs);
      finished = true;
    } finally {
      signal.removeEventListener('abort', onAbort);
      this.finishedMaxBacklog = Math.max(this.finishedMaxBacklog, channel.maxBacklogSeen);
      this.open.delete(channel);
      // Client gone, timeout or error: the runner's signal fires so the command stops.
      if (!finished) controller.abort();
    }
  }

  /** Commands running now, each holding a slot of its lane (tests, fault suite). */
  get running(): number {
    return this.slots.long.inUse + this.slots.quick.inUse;
  }

  /** Commands waiting for a slot (tests). */
  get waitingForSlot(): number {
    return this.slots.long.waiting + this.slots.quick.waiting;
  }

  async ready(): Promise<Readiness> {
    return { ok: true };
  }

  /** Waits for commands still running (their responses are closed by the api first). */
  async close(): Promise<void> {
    await Promise.all([...this.runs]);
  }
}
