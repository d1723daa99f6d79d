import { readFileSync } from 'node:fs';
import net from 'node:net';
import { freePort } from './free-port';

describe('freePort', () => {
  it('hands out ports a child can listen on, below the ephemeral range, a different one each time', async () => {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    const ports = [await freePort(), await freePort(), await freePort()];
    expect(new Set(ports).size).toBe(3);
    for (const port of ports) {
      // Outgoing connections take their ports from the ephemeral range: none can take these first.
      expect(port).toBeLessThan(low);
      const srv = net.createServer();
      await new Promise<void>((resolve, reject) => {
        srv.once('error', reject);
        srv.listen(port, '127.0.0.1', resolve);
      });
      await new Promise<void>((resolve) => srv.close(() => resolve()));
    }
  });

  it('skips a port that is taken', async () => {
    const first = await freePort();
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(first + 1, '127.0.0.1', resolve));
    try {
      // The next candidate after `first` is taken: freePort moves past it.
      expect(await freePort()).not.toBe(first + 1);
    } finally {
      await new Promise<void>((resolve) => holder.close(() => resolve()));
    }
  });
});
