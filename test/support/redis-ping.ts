import { rawRedisSocket } from './raw-redis-socket';

/** Sends a raw PING and resolves true on +PONG. A raw socket leaves no reconnect timers behind. */
export function redisPing(url: string, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = rawRedisSocket(url, ['PING']);
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('error', () => done(false));
    let buf = '';
    socket.on('data', (d) => {
      buf += d.toString();
      // An error first (AUTH refused) fails even where the default user could still PING.
      if (buf.startsWith('-')) done(false);
      else if (buf.includes('+PONG')) done(true);
    });
  });
}
