import type { IncomingMessage } from 'node:http';

/** How much of an oversized body the server reads and discards so that its 413 reaches the client. */
const DRAIN_MAX_BYTES = 64 * 1024 * 1024;
/** A client that sends nothing for this long has stalled: give up on it. */
const DRAIN_IDLE_MS = 30_000;
/** And however slowly it uploads, no longer than Node's own limit for a whole request (requestTimeout). */
const DRAIN_MAX_MS = 300_000;

export interface DrainLimits {
  maxBytes: number;
  idleMs: number;
  maxMs: number;
}

const DEFAULT_LIMITS: DrainLimits = { maxBytes: DRAIN_MAX_BYTES, idleMs: DRAIN_IDLE_MS, maxMs: DRAIN_MAX_MS };

/**
 * Reads and discards the rest of a request body. A server that answers early and closes while the
 * client is still uploading makes the client fail with a broken pipe instead of reading the answer
 * (Python, Node fetch, curl all do); reading the rest first lets every client see it. Bounded in
 * bytes, in silence (a stalled client) and in total time: a slow uploader that keeps sending is
 * waited for (a fixed 30 s cut every client slower than ~350 KB/s off with a broken pipe). Past a
 * bound the caller gives up on the answer and closes the connection. Resolves true when the body
 * ended within the bounds.
 */
export function drainRequest(req: IncomingMessage, limits: Partial<DrainLimits> = {}): Promise<boolean> {
  const { maxBytes, idleMs, maxMs } = { ...DEFAULT_LIMITS, ...limits };
  if (req.complete || req.readableEnded) return Promise.resolve(true);
  return new Promise<boolean>((resolve) => {
    let seen = 0;
    const done = (ok: boolean): void => {
      clearTimeout(total);
      clearTimeout(idle);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('close', onClose);
      resolve(ok);
    };
    const onData = (chunk: Buffer): void => {
      seen += chunk.length;
      if (seen > maxBytes) return done(false);
      idle.refresh();
    };
    const onEnd = (): void => done(true);
    const onClose = (): void => done(req.complete);
    const total = setTimeout(() => done(false), maxMs);
    const idle = setTimeout(() => done(false), idleMs);
    total.unref();
    idle.unref();
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('close', onClose);
    req.resume();
  });
}
