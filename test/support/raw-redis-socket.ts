import net from 'node:net';

/** One RESP array: arguments with spaces or CR/LF (a password) survive, unlike an inline command. */
function resp(args: readonly string[]): string {
  return `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`;
}

/**
 * A raw socket to a redis:// URL that sends AUTH (when the URL has a password) and then `command`
 * once connected. Tests use raw sockets where a client library would leave reconnect timers behind
 * or misread the stream (MONITOR).
 */
export function rawRedisSocket(url: string, command: readonly string[]): net.Socket {
  const u = new URL(url);
  const socket = net.connect({ host: u.hostname || '127.0.0.1', port: Number(u.port || 6379) });
  socket.once('connect', () => {
    const password = u.password ? decodeURIComponent(u.password) : '';
    const user = u.username ? decodeURIComponent(u.username) : '';
    const auth = password ? resp(user ? ['AUTH', user, password] : ['AUTH', password]) : '';
    socket.write(auth + resp(command));
  });
  return socket;
}
