import type { Writable } from 'node:stream';
import { ResponseStream, type Response } from '@sailpoint/connector-sdk';
import { FusionError } from '../core/errors';

/** The platform refuses one send above 256 KiB (the item in its `{data, type}` envelope). */
export const MAX_SEND_BYTES = 256 * 1024;

function itemName(item: Record<string, unknown>): string {
  const key = item.key as { simple?: { id?: unknown } } | undefined;
  const attrs = (item.attributes ?? {}) as Record<string, unknown>;
  const id = item.identity ?? key?.simple?.id ?? attrs.id;
  const name = attrs.name ?? item.uuid;
  return (
    [id, name]
      .filter((v) => v !== undefined && v !== null)
      .map(String)
      .join(' / ') || 'an item without identity'
  );
}

/** Fails before the platform would, naming the account, instead of a rejection nobody can place. */
function checkSize(item: Record<string, unknown>): void {
  const bytes = Buffer.byteLength(JSON.stringify({ data: item, type: 'output' }));
  if (bytes <= MAX_SEND_BYTES) return;
  const name = itemName(item);
  throw new FusionError(
    'ITEM_TOO_LARGE',
    `The output for account ${name} is ${bytes} bytes, above the platform's limit of ${MAX_SEND_BYTES} bytes per item. Reduce its attributes (long multi-valued lists, large values) or leave them out of the attribute mapping.`,
    { item: name, bytes },
  );
}

/**
 * The SDK's `res.send()` ignores the writable's backpressure. When the response is the SDK's
 * ResponseStream, wait for 'drain' after a write that filled the buffer, so a fast proxy or
 * core cannot pile items up in memory faster than the platform takes them.
 */
function writableOf<O>(res: Response<O>): Writable | undefined {
  if (!(res instanceof ResponseStream)) return undefined;
  // `_writable` is protected in the SDK's typings; reading it is the only way to see backpressure.
  return (res as unknown as { _writable?: Writable })._writable;
}

function drained(w: Writable): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const cleanup = (): void => {
      w.off('drain', onDrain);
      w.off('close', onClose);
      w.off('error', onError);
    };
    const onDrain = (): void => {
      cleanup();
      resolve();
    };
    const onClose = (): void => {
      cleanup();
      reject(new Error('the platform closed the response stream'));
    };
    const onError = (e: Error): void => {
      cleanup();
      reject(e);
    };
    w.on('drain', onDrain);
    w.on('close', onClose);
    w.on('error', onError);
  });
}

export interface ResponseSink {
  send(item: Record<string, unknown>): Promise<void>;
  /** Tells the platform the command is alive; at most one per interval. */
  keepAlive(): void;
  /** Stops the sink's own keepAlive timer (the command ended). */
  close(): void;
}

/** What the sink schedules its own keepAlive with (tests drive it by hand). */
export interface SinkClock {
  now(): number;
  schedule(fn: () => void, ms: number): () => void;
}

const REAL_CLOCK: SinkClock = {
  now: () => Date.now(),
  schedule: (fn, ms) => {
    const t = setTimeout(fn, ms);
    return () => clearTimeout(t);
  },
};

/**
 * The platform drops a command silent for too long; heartbeats of the proxy and progress of the
 * core are not enough when either is silent (a long platform call, a proxy behind a buffering hop),
 * so the sink keeps the command alive itself: a keepAlive at the latest one interval after the
 * last one, whoever sent that. (A fixed timer beside a throttle of the same interval could swallow
 * a tick, leaving a gap of two intervals.)
 */
export function createResponseSink<O>(
  res: Response<O>,
  keepAliveIntervalMs: number,
  clock: SinkClock = REAL_CLOCK,
): ResponseSink {
  const writable = writableOf(res);
  let lastKeepAlive = Number.NEGATIVE_INFINITY;
  let cancelTimer: () => void = () => undefined;
  let closed = false;
  const arm = (): void => {
    cancelTimer();
    if (!closed) cancelTimer = clock.schedule(() => send(), keepAliveIntervalMs);
  };
  const send = (): void => {
    lastKeepAlive = clock.now();
    res.keepAlive();
    arm();
  };
  arm();
  return {
    async send(item) {
      checkSize(item);
      res.send(item as O);
      if (writable?.writableNeedDrain) await drained(writable);
    },
    keepAlive() {
      if (closed || clock.now() - lastKeepAlive < keepAliveIntervalMs) return;
      send();
    },
    close() {
      closed = true;
      cancelTimer();
    },
  };
}
