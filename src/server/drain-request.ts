import type { IncomingMessage } from 'node:http';

/** How much of an oversized body the server reads and discards so that its 413 reaches the client. */
const DRAIN_MAX_BYTES = 64 * 1024 * 1024;
const DRAIN_MAX_MS = 30_000;

/**
 * Reads and discards the rest of a request body. A server that answers early and closes while the
 * client is still uploading makes the client fail with a broken pipe instead of reading the answer
 * (Python, Node fetch, curl all do); reading the rest first lets every client see it. Bounded in
 * bytes and time: past either bound the caller gives up on the answer and closes the connection.
 * Resolves true when the body ended within the bounds.
 */
export function drainRequest(req: IncomingMessage, maxBytes = DRAIN_MAX_BYTES, maxMs = DRAIN_MAX_MS): Promise<boolean> {
  if (req.complete || req.readableEnded) return Promise.resolve(true);
  return new Promise<boolean>((resolve) => {
    let seen = 0;
    const done = (ok: boolean): void => {
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('close', onClose);
      resolve(ok);
    };
    const onData = (chunk: Buffer): void => {
      seen += chunk.length;
      if (seen > maxBytes) done(false);
    };
    const onEnd = (): void => done(true);
    const onClose = (): void => done(req.complete);
    const timer = setTimeout(() => done(false), maxMs);
    timer.unref();
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('close', onClose);
    req.resume();
  });
}
