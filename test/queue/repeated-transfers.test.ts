import type { QueueDispatcher } from '../../src/queue/queue-dispatcher';
import { commandBody, ndjsonItems, post, startHarness } from '../server/harness';

/**
 * bench:proxy saw later queue transfers slower than the first; this pins what could build up
 * from one transfer to the next in our code: result streams, cancel keys and reader leases left
 * in Redis, BullMQ job hashes kept after completion, reader connections added instead of reused.
 */
describe('queue mode across repeated transfers', () => {
  it('leaves the same Redis keys and the same reader connections after the fifth transfer as after the first', async () => {
    const h = await startHarness('queue');
    try {
      const dispatcher = h.server.dispatcher as QueueDispatcher;
      const keysOfQueue = async (): Promise<string[]> => (await h.redis!.keys(`*${h.env.QUEUE_NAME}*`)).sort();
      const after: Array<{ keys: string[]; readers: number }> = [];
      for (let i = 0; i < 5; i++) {
        const res = await post(`${h.base}/proxy`, commandBody({ items: 300 }));
        expect(res.status).toBe(200);
        expect(res.complete).toBe(true);
        expect(ndjsonItems(res.body)).toHaveLength(300);
        // The api deletes the stream after handing on its end entry; wait for that clean-up, then look.
        for (let t = 0; t < 100 && (await keysOfQueue()).some((k) => /:(out|reader|cancel)$/.test(k)); t++)
          await new Promise((r) => setTimeout(r, 20));
        after.push({ keys: await keysOfQueue(), readers: dispatcher.readerConnectionsOpen });
        expect(dispatcher.readersInUse).toBe(0);
      }
      // No result stream, lease, cancel key or job hash survives a completed transfer.
      for (const a of after) {
        expect(a.keys.filter((k) => /:(out|reader|cancel)$/.test(k))).toEqual([]);
      }
      const jobIds = h.runner.executions.map((e) => e.jobId);
      expect(jobIds).toHaveLength(5);
      for (const a of after) expect(a.keys.filter((k) => jobIds.some((id) => k.includes(id)))).toEqual([]);
      expect(after[4]!.keys).toEqual(after[0]!.keys);
      // One request at a time: one reader connection, reused every time.
      expect(after.map((a) => a.readers)).toEqual([1, 1, 1, 1, 1]);
    } finally {
      await h.close();
    }
  });
});
