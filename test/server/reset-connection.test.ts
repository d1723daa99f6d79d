/**
 * resetConnection over real TCP sockets: it must never leave a handle behind, or the server's
 * process (and jest's workers) cannot exit after close().
 */
import { once } from 'node:events';
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import { resetConnection } from '../../src/server/reset-connection';

let server: Server;
let accepted: Promise<Socket>;
let client: Socket;

beforeEach(async () => {
  let take!: (s: Socket) => void;
  accepted = new Promise((r) => (take = r));
  server = createServer(take);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  client = connect((server.address() as AddressInfo).port, '127.0.0.1');
  client.on('error', () => undefined);
  await once(client, 'connect');
});

afterEach(async () => {
  client.destroy();
  server.close();
  await once(server, 'close');
});

/** Resolves when the socket's handle is closed; rejects on a socket error (a failed reset). */
function closed(socket: Socket): Promise<void> {
  return new Promise((resolve, reject) => {
    socket.once('close', () => resolve());
    socket.once('error', reject);
  });
}

it('resets a live connection: the client sees ECONNRESET, not a clean end', async () => {
  const socket = await accepted;
  const clientError = once(client, 'error').then(([e]) => (e as NodeJS.ErrnoException).code);
  const done = closed(socket);
  await resetConnection(socket);
  await done;
  expect(await clientError).toBe('ECONNRESET');
});

it('closes a connection the client half-closed (Node ended ours): a reset would fail and leak the handle', async () => {
  const socket = await accepted;
  const ended = new Promise<void>((resolve, reject) =>
    socket.once('end', () => {
      // Node ends our side a tick after 'end'; the route meets the socket later still, with the
      // shutdown under way: ended, not finished, not destroyed.
      Promise.resolve()
        .then(() => {
          expect(socket.writableEnded).toBe(true);
          expect(socket.writableFinished).toBe(false);
          return resetConnection(socket);
        })
        .then(resolve, reject);
    }),
  );
  const done = closed(socket);
  client.end();
  await ended;
  await done;
  expect(socket.destroyed).toBe(true);
});

it('stops waiting for buffered bytes when the socket closes, leaving no timer behind', async () => {
  const socket = await accepted;
  socket.on('error', () => undefined);
  client.pause();
  // More than the kernel buffers hold while the client does not read: bytes stay in Node's buffer.
  const chunk = Buffer.alloc(1024 * 1024);
  while (socket.write(chunk));
  expect(socket.writableLength).toBeGreaterThan(0);
  let settled = false;
  const reset = resetConnection(socket).then(() => (settled = true));
  const closedAt = new Promise((r) => socket.once('close', r));
  client.destroy();
  await closedAt;
  // The same turn of the event loop as 'close': without it the wait ran its full second.
  await new Promise((r) => setImmediate(r));
  expect(settled).toBe(true);
  await reset;
});
