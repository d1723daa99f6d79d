import type { Socket } from 'node:net';

/** How long bytes still buffered may take to reach the kernel before the reset drops them. */
const DRAIN_WAIT_MS = 1000;

/**
 * Ends a started response that failed with a TCP reset, never a clean close: over HTTP/1.0 (or
 * through a hop that speaks it) a clean close after the last byte reads as a complete answer; a
 * reset cannot. Bytes still buffered get up to a second to reach the kernel first (a reset drops
 * unsent bytes), so the client usually learns that the command started before it learns that it
 * failed; either way it fails.
 *
 * The wait also ends when the socket closes (the client left, or the server closed it on
 * shutdown): a destroyed socket never emits 'drain', and a timer left running kept the process
 * alive for up to a second after server.close() resolved.
 *
 * A socket already ended (the client half-closed, so Node ended our side too) cannot be reset:
 * libuv refuses a reset after a shutdown (EINVAL) and Node then drops the handle without closing
 * it, which keeps the process alive for good. Its FIN is queued anyway, so it is destroyed.
 */
export async function resetConnection(socket: Socket | null): Promise<void> {
  if (!socket || socket.destroyed) return;
  if (socket.writableLength > 0) {
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        socket.off('drain', done);
        socket.off('close', done);
        resolve();
      };
      const timer = setTimeout(done, DRAIN_WAIT_MS);
      socket.once('drain', done);
      socket.once('close', done);
    });
  }
  if (socket.destroyed) return;
  if (socket.writableEnded) socket.destroy();
  else socket.resetAndDestroy();
}
