import { readFileSync } from 'node:fs';
import net from 'node:net';

/**
 * Ports a child process (redis-server, a served api, nginx, Prometheus) is told to listen on are taken
 * below the kernel's ephemeral range: a port from that range (listen on 0, then close) can be handed to
 * any outgoing connection of the busy test run before the child binds it, which CI saw under load as
 * EADDRINUSE. Each jest worker draws from a block of its own, so two workers never hand out the same port.
 */
const LOWEST = 10_000;
const BLOCK = 2_000;

/** The first port of the ephemeral range (ip_local_port_range), or undefined where it cannot be read. */
function ephemeralLow(): number | undefined {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 0 ? low : undefined;
  } catch {
    return undefined;
  }
}

/** Listens on `port` (0: any) and closes: the port bound, or the error that kept it from binding. */
function bind(port: number): Promise<number | Error> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', resolve);
    srv.listen(port, '127.0.0.1', () => {
      const addr = srv.address();
      const bound = typeof addr === 'object' && addr ? addr.port : new Error('no address after listen');
      srv.close(() => resolve(bound));
    });
  });
}

/** Any port (listen on 0): the fallback where no range below the ephemeral one is known. */
async function anyPort(): Promise<number> {
  const port = await bind(0);
  if (port instanceof Error) throw new Error('freePort: could not listen on 127.0.0.1', { cause: port });
  return port;
}

const worker = Number(process.env.JEST_WORKER_ID ?? 0);
let next = Math.floor(Math.random() * BLOCK);

/** A TCP port free a moment ago on 127.0.0.1, out of the kernel's reach for outgoing connections. */
export async function freePort(): Promise<number> {
  const low = ephemeralLow();
  const start = LOWEST + worker * BLOCK;
  if (low === undefined || start + BLOCK > low) return anyPort();
  for (let tries = 0; tries < BLOCK; tries++) {
    const port = start + (next++ % BLOCK);
    if ((await bind(port)) === port) return port;
  }
  return anyPort();
}
