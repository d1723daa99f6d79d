import type { Redis } from 'ioredis';
import { FusionError, type FusionErrorCode } from '../core/errors';
import type { OutputChunk } from '../dispatch/command-dispatcher';
import type { ReaderConnection } from './reader-connection-pool';
import { ENTRY, type ResultKeys } from './result-keys';

export interface ResultStreamReaderOptions {
  /** No entry at all (start, output, progress) for this long: COMMAND_TIMEOUT. */
  idleTimeoutMs: number;
  /** Longest single XREAD BLOCK; bounds how stale the abort and timeout checks can be. */
  blockMs: number;
  /** Entries per XREAD. */
  count: number;
}

type StreamEntry = [id: Buffer, fields: Buffer[]];

/** Entries are read as Buffers: the NDJSON goes to the socket without a decode and re-encode. */
function field(fields: Buffer[], name: string): Buffer | undefined {
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i]!.toString('latin1') === name) return fields[i + 1];
  return undefined;
}

function text(fields: Buffer[], name: string): string | undefined {
  return field(fields, name)?.toString('utf8');
}

function count(fields: Buffer[], name: string): number | undefined {
  const v = text(fields, name);
  return v !== undefined && /^\d+$/.test(v) ? Number(v) : undefined;
}

function lost(message: string): FusionError {
  return new FusionError('PROXY_STREAM_ABORTED', `the result stream lost entries (${message}); run the command again`);
}

/**
 * Api side of a job's result stream. Reads with XREAD BLOCK on a connection of its own and
 * deletes what it has handed on (XDEL), which is the flow-control signal the writer watches
 * (XLEN = unread entries).
 */
export class ResultStreamReader {
  constructor(
    private readonly conn: ReaderConnection,
    /** Non-blocking connection for XDEL and CLIENT UNBLOCK. */
    private readonly control: Redis,
    private readonly keys: ResultKeys,
    private readonly opts: ResultStreamReaderOptions,
  ) {}

  async *read(signal: AbortSignal): AsyncGenerator<OutputChunk> {
    let lastId = '0-0';
    // A stream that expired or was lost (Redis restart, failover) and was recreated by a later
    // write must not look complete: data entries are numbered and the end entry carries totals.
    let nextSeq = 0;
    let items = 0;
    let deadline = Date.now() + this.opts.idleTimeoutMs;
    const unblock = (): void => {
      this.control.client('UNBLOCK', this.conn.clientId).catch(() => undefined);
    };
    signal.addEventListener('abort', unblock, { once: true });
    try {
      for (;;) {
        if (signal.aborted) throw new FusionError('COMMAND_CANCELLED', 'the request was cancelled');
        const remaining = deadline - Date.now();
        if (remaining <= 0) {
          throw new FusionError(
            'COMMAND_TIMEOUT',
            `no worker started the command or it showed no progress for ${this.opts.idleTimeoutMs} ms (REQUEST_TIMEOUT_MS)`,
            { timeoutMs: this.opts.idleTimeoutMs },
          );
        }
        const block = Math.max(1, Math.min(this.opts.blockMs, remaining));
        const reply = (await this.conn.redis.xreadBuffer(
          'COUNT',
          this.opts.count,
          'BLOCK',
          block,
          'STREAMS',
          this.keys.stream,
          lastId,
        )) as Array<[string, StreamEntry[]]> | null;
        const entries = reply?.[0]?.[1];
        if (!entries || entries.length === 0) continue;
        deadline = Date.now() + this.opts.idleTimeoutMs;
        const ids: string[] = [];
        for (const [id, fields] of entries) {
          lastId = id.toString('latin1');
          ids.push(lastId);
          const type = text(fields, 't');
          if (type === ENTRY.data) {
            const seq = count(fields, 'q');
            const n = count(fields, 'n');
            if (seq !== nextSeq || n === undefined)
              throw lost(`expected output entry ${nextSeq}, got ${seq ?? 'an unnumbered one'}`);
            nextSeq += 1;
            items += n;
            yield { data: field(fields, 'd') ?? Buffer.alloc(0), items: n };
          } else if (type === ENTRY.end) {
            const entries = count(fields, 'q');
            const total = count(fields, 'n');
            if (entries !== nextSeq || total !== items) {
              throw lost(
                `the worker wrote ${entries ?? '?'} entries with ${total ?? '?'} items, ${nextSeq} entries with ${items} items arrived`,
              );
            }
            return;
          } else if (type === ENTRY.error) {
            const code = (text(fields, 'c') ?? 'PROXY_SERVER_ERROR') as FusionErrorCode;
            // Counted by the worker that ran it (fusion_errors_total{component="worker"}): the api does
            // not count it again.
            throw new FusionError(code, text(fields, 'm') ?? 'the command failed in the worker', { fromCommand: true });
          }
        }
        // Everything in this batch has been handed to the response: free it, which lets the writer go on.
        this.control.xdel(this.keys.stream, ...ids).catch(() => undefined);
      }
    } finally {
      signal.removeEventListener('abort', unblock);
    }
  }
}
