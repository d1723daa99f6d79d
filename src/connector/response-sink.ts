import type { Writable } from 'node:stream';
import { ResponseStream, type Response } from '@sailpoint/connector-sdk';

/**
 * The SDK's `res.send()` ignores the writable's backpressure. When the response is the SDK's
 * ResponseStream, wait for 'drain' after a write that filled the buffer, so a fast proxy or
 * core cannot pile items up in memory faster than the platform takes them.
 */
function writableOf(res: Response<unknown>): Writable | undefined {
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
  /** Tells the platform the command is alive; throttled to one call per interval. */
  keepAlive(): void;
}

export function createResponseSink(res: Response<unknown>, keepAliveIntervalMs: number, now: () => number = Date.now): ResponseSink {
  const writable = writableOf(res);
  let lastKeepAlive = Number.NEGATIVE_INFINITY;
  return {
    async send(item) {
      res.send(item);
      if (writable?.writableNeedDrain) await drained(writable);
    },
    keepAlive() {
      const t = now();
      if (t - lastKeepAlive < keepAliveIntervalMs) return;
      lastKeepAlive = t;
      res.keepAlive();
    },
  };
}
