/**
 * The rest of an oversized body is read before the 413 goes out, so the client reads the answer
 * instead of a broken pipe. The bounds are in bytes and in silence, not a fixed time: a slow
 * uploader that keeps sending gets its 413 however long its upload takes (within Node's 5-minute
 * request limit). Jest's fake clock drives the upload, so the test takes no wall time.
 */
import type { IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import { drainRequest } from '../../src/server/drain-request';

function upload(): { req: IncomingMessage; stream: PassThrough & { complete: boolean } } {
  const stream = Object.assign(new PassThrough(), { complete: false });
  stream.on('end', () => (stream.complete = true));
  return { req: stream as unknown as IncomingMessage, stream };
}

describe('drainRequest at its defaults', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('a client uploading 100 KB/s for 60 s (slower than 350 KB/s) is read to its end', async () => {
    const { req, stream } = upload();
    let result: boolean | undefined;
    void drainRequest(req).then((ok) => (result = ok));
    for (let s = 0; s < 60; s++) {
      stream.write(Buffer.alloc(100 * 1024));
      await jest.advanceTimersByTimeAsync(1000);
      expect(result).toBeUndefined();
    }
    stream.end();
    await jest.advanceTimersByTimeAsync(0);
    expect(result).toBe(true);
  });

  it('a client that stops sending is given up on', async () => {
    const { req, stream } = upload();
    let result: boolean | undefined;
    void drainRequest(req).then((ok) => (result = ok));
    stream.write(Buffer.alloc(1024));
    await jest.advanceTimersByTimeAsync(5 * 60 * 1000);
    expect(result).toBe(false);
  });

  it('a body past the byte bound is given up on at once', async () => {
    const { req, stream } = upload();
    let result: boolean | undefined;
    void drainRequest(req, { maxBytes: 10 }).then((ok) => (result = ok));
    stream.write(Buffer.alloc(11));
    await jest.advanceTimersByTimeAsync(0);
    expect(result).toBe(false);
  });
});
