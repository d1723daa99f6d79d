import type { CommandContext, CommandOutput, CommandRunner } from '../../src/core/command-runner';
import type { CommandType } from '../../src/core/command-types';
import { FusionError } from '../../src/core/errors';
import { scaled } from './time-factor';

/**
 * What a scripted command does, sent by the test in `input.script` so the same runner works
 * in-process and behind a queue worker.
 */
export interface Script {
  /** Number of generated items ({i, pad}) to emit; default 1. */
  items?: number;
  /** Approximate size of each generated item in bytes. */
  itemBytes?: number;
  /** Wait before the first item. */
  delayBeforeFirstMs?: number;
  /** Wait between items. */
  delayBetweenMs?: number;
  /** Call ctx.progress() this often while waiting. */
  progressEveryMs?: number;
  /** Throw this message before the first item. */
  failBeforeFirst?: string;
  /** Throw `failMessage` after this many items. */
  failAfterItems?: number;
  failMessage?: string;
  /** After this many items, wait until cancelled. */
  hangAfterItems?: number;
  /** After this many items, wait until the test calls `release(gate)` (or the command is cancelled). */
  gateAfterItems?: number;
  gate?: string;
}

export interface Execution {
  type: CommandType;
  input: Record<string, unknown>;
  config: Record<string, unknown>;
  jobId: string;
  cancelled: boolean;
  finished: boolean;
  emitted: number;
}

function sleep(ms: number, ctx: CommandContext, progressEveryMs?: number): Promise<void> {
  return new Promise((resolve, reject) => {
    if (ctx.signal.aborted) return reject(new FusionError('COMMAND_CANCELLED', 'cancelled'));
    const tick = progressEveryMs ? setInterval(() => ctx.progress(), progressEveryMs) : undefined;
    const done = (): void => {
      clearTimeout(timer);
      if (tick) clearInterval(tick);
      ctx.signal.removeEventListener('abort', onAbort);
    };
    const onAbort = (): void => {
      done();
      reject(new FusionError('COMMAND_CANCELLED', 'cancelled'));
    };
    const timer = setTimeout(() => {
      done();
      resolve();
    }, ms);
    ctx.signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** A CommandRunner for transport tests: emits what the script says and records every execution. */
export class ScriptedRunner {
  readonly executions: Execution[] = [];
  private waiters: Array<() => void> = [];
  private readonly opened = new Set<string>();

  /** Lets every command waiting on `gate` go on. */
  release(gate: string): void {
    this.opened.add(gate);
    this.changed();
  }

  readonly runner: CommandRunner = (type, input, config, ctx) => this.run(type, input, config, ctx);

  get count(): number {
    return this.executions.length;
  }

  /** Resolves when some execution satisfies `predicate` (checked on every change). */
  async waitFor(predicate: (e: Execution[]) => boolean, timeoutMs = scaled(5000)): Promise<void> {
    const end = Date.now() + timeoutMs;
    while (!predicate(this.executions)) {
      if (Date.now() > end) throw new Error('ScriptedRunner.waitFor timed out');
      await new Promise<void>((r) => {
        const t = setTimeout(r, 20);
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
  }

  private changed(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  private async *run(
    type: CommandType,
    input: Record<string, unknown>,
    config: Record<string, unknown>,
    ctx: CommandContext,
  ): AsyncGenerator<CommandOutput> {
    const exec: Execution = { type, input, config, jobId: ctx.jobId, cancelled: false, finished: false, emitted: 0 };
    this.executions.push(exec);
    const onAbort = (): void => {
      exec.cancelled = true;
      this.changed();
    };
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    this.changed();
    const s = (input.script ?? {}) as Script;
    const pad = 'x'.repeat(Math.max(0, (s.itemBytes ?? 40) - 30));
    try {
      if (s.delayBeforeFirstMs) await sleep(s.delayBeforeFirstMs, ctx, s.progressEveryMs);
      if (s.failBeforeFirst) throw new Error(s.failBeforeFirst);
      const n = s.items ?? 1;
      for (let i = 0; i < n; i++) {
        if (s.failAfterItems !== undefined && i === s.failAfterItems)
          throw new Error(s.failMessage ?? 'scripted failure');
        if (s.hangAfterItems !== undefined && i === s.hangAfterItems) await sleep(3_600_000, ctx);
        if (s.gateAfterItems !== undefined && i === s.gateAfterItems) {
          await this.waitFor(() => this.opened.has(s.gate ?? '') || ctx.signal.aborted, 3_600_000);
          if (ctx.signal.aborted) throw new FusionError('COMMAND_CANCELLED', 'cancelled');
        }
        if (i > 0 && s.delayBetweenMs) await sleep(s.delayBetweenMs, ctx, s.progressEveryMs);
        exec.emitted += 1;
        yield type === 'std:test-connection' ? { status: 'ok', i } : { i, pad };
      }
      exec.finished = true;
    } finally {
      ctx.signal.removeEventListener('abort', onAbort);
      this.changed();
    }
  }
}
