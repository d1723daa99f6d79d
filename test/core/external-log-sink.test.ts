import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ExternalLogSink } from '../../src/observability/external-log-sink';
import type { LogRecord } from '../../src/core/ports/log-sink';
import { runWithLogContext } from '../../src/observability/log-context';

const rec = (i: number): LogRecord => ({ level: 'info', time: new Date(0).toISOString(), msg: `line ${i}` });

function receiver(): Promise<{ server: Server; url: string; batches: LogRecord[][] }> {
  const batches: LogRecord[][] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      batches.push(JSON.parse(body) as LogRecord[]);
      res.writeHead(204).end();
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/logs`, batches }),
    ),
  );
}

describe('ExternalLogSink', () => {
  test('sends records in batches as JSON arrays', async () => {
    const { server, url, batches } = await receiver();
    const sink = new ExternalLogSink(url, { batchSize: 10, flushEveryMs: 20 });
    for (let i = 0; i < 25; i++) sink.write(rec(i));
    await sink.close();
    await new Promise<void>((r) => server.close(() => r()));
    expect(batches.flat().map((r) => r.msg)).toEqual(Array.from({ length: 25 }, (_, i) => `line ${i}`));
    expect(batches.length).toBeGreaterThanOrEqual(3);
    expect(batches.every((b) => b.length <= 10)).toBe(true);
    expect(sink.stats).toMatchObject({ sent: 25, dropped: 0 });
  });

  test('records carry the job id and command of the run that wrote them', async () => {
    const { server, url, batches } = await receiver();
    const sink = new ExternalLogSink(url, { batchSize: 10, flushEveryMs: 20 });
    runWithLogContext({ jobId: 'job-42', command: 'std:account:list' }, () => sink.write(rec(1)));
    await sink.close();
    await new Promise<void>((r) => server.close(() => r()));
    expect(batches.flat()).toEqual([
      expect.objectContaining({ msg: 'line 1', jobId: 'job-42', command: 'std:account:list' }),
    ]);
  });

  test('a URL that is down never throws or blocks; records are dropped and counted; the buffer is bounded', async () => {
    const { server, url } = await receiver();
    await new Promise<void>((r) => server.close(() => r()));
    const sink = new ExternalLogSink(url, { batchSize: 5, maxBuffered: 20, flushEveryMs: 10, closeTimeoutMs: 500 });
    for (let i = 0; i < 100; i++) expect(() => sink.write(rec(i))).not.toThrow();
    await sink.close();
    expect(sink.stats.sent).toBe(0);
    expect(sink.stats.dropped).toBe(100);
    expect(sink.stats.failedPosts).toBeGreaterThan(0);
  });

  test('close() accounts for a post still running at its deadline: every record is sent or dropped, none unaccounted', async () => {
    // A collector that accepts the connection and never answers: the post is still running at the deadline.
    const held: Array<() => void> = [];
    const server = createServer((_req, res) => held.push(() => res.destroy()));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/logs`;
    const sink = new ExternalLogSink(url, { batchSize: 5, maxBuffered: 20, flushEveryMs: 10, closeTimeoutMs: 50 });
    for (let i = 0; i < 12; i++) sink.write(rec(i));
    await sink.close();
    expect(sink.stats.sent + sink.stats.dropped).toBe(12);
    expect(sink.stats.sent).toBe(0);
    held.forEach((end) => end());
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });
});
