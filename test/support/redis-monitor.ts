import { rawRedisSocket } from './raw-redis-socket';

export interface MonitoredCommand {
  /** The command's name, lower case. */
  cmd: string;
  args: string[];
  /** The client's address as Redis printed it ("127.0.0.1:43746"): one per connection. */
  source: string;
  /** When Redis ran it, in ms since the epoch (microsecond precision): gaps between commands. */
  at: number;
}

export interface RedisMonitor {
  readonly seen: MonitoredCommand[];
  close(): void;
}

/**
 * MONITOR over a raw socket. ioredis's monitor() loses its command queue when the first monitored
 * line arrives in the same TCP read as MONITOR's +OK (it switches to monitoring one tick later):
 * "Command queue state error" on a busy Redis, which failed CI's reader-lease test.
 */
export function redisMonitor(url: string): Promise<RedisMonitor> {
  const seen: MonitoredCommand[] = [];
  return new Promise((resolve, reject) => {
    const socket = rawRedisSocket(url, ['MONITOR']);
    let buf = '';
    // AUTH answers +OK first when the URL has a password: MONITOR is on only at the last one.
    let oksToCome = new URL(url).password ? 2 : 1;
    socket.once('error', reject);
    socket.on('data', (d) => {
      buf += d.toString('latin1');
      let end: number;
      while ((end = buf.indexOf('\r\n')) >= 0) {
        const line = buf.slice(0, end);
        buf = buf.slice(end + 2);
        if (line.startsWith('-')) {
          socket.destroy();
          reject(new Error(`MONITOR refused: ${line.slice(1)}`));
          return;
        }
        if (line === '+OK' && oksToCome > 0) {
          if (--oksToCome === 0) resolve({ seen, close: () => socket.destroy() });
          continue;
        }
        const parsed = parseMonitorLine(line);
        if (parsed) seen.push(parsed);
      }
    });
  });
}

/** `+1795849734.375720 [0 127.0.0.1:43746] "bzpopmin" "key" "5"`; args are quoted as sdscatrepr quotes them. */
export function parseMonitorLine(line: string): MonitoredCommand | undefined {
  const m = /^\+(\d+\.\d+) \[\d+ ([^\]]+)\] (.*)$/.exec(line);
  if (!m) return undefined;
  const args: string[] = [];
  const rest = m[3]!;
  let i = 0;
  while (i < rest.length) {
    if (rest[i] !== '"') {
      i++;
      continue;
    }
    let s = '';
    i++;
    while (i < rest.length && rest[i] !== '"') {
      if (rest[i] === '\\') {
        const c = rest[i + 1];
        if (c === 'x') {
          s += String.fromCharCode(parseInt(rest.slice(i + 2, i + 4), 16));
          i += 4;
          continue;
        }
        s += ({ n: '\n', r: '\r', t: '\t', a: '\x07', b: '\b' } as Record<string, string>)[c ?? ''] ?? c ?? '';
        i += 2;
        continue;
      }
      s += rest[i];
      i++;
    }
    args.push(s);
    i++;
  }
  if (args.length === 0) return undefined;
  return { cmd: args[0]!.toLowerCase(), args, source: m[2]!, at: Number(m[1]) * 1000 };
}
