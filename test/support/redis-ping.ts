import net from 'node:net';

/** Sends a raw PING and resolves true on +PONG. A raw socket leaves no reconnect timers behind. */
export function redisPing(url: string, timeoutMs = 1000): Promise<boolean> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect({ host: u.hostname || '127.0.0.1', port: Number(u.port || 6379) });
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => {
      const auth = u.password ? `AUTH ${decodeURIComponent(u.password)}\r\n` : '';
      socket.write(`${auth}PING\r\n`);
    });
    let buf = '';
    socket.on('data', (d) => {
      buf += d.toString();
      if (buf.includes('+PONG')) done(true);
      else if (buf.startsWith('-')) done(false);
    });
  });
}
