import { commandBody, delay, ndjsonItems, post, startHarness, type Harness } from '../server/harness';
import { startOwnRedis, type OwnRedis } from '../support/own-redis';

/**
 * #10 item 5. After a Redis restart the api's pooled reader connections are dead; a request that
 * found out only after queuing its job answered 503 for a command that then ran, so a client
 * retrying on 503 ran it twice. Here every command carries a tag, every 503 is retried, and the
 * runner must have run each tag exactly once.
 */
describe('a Redis restart under a queue-mode server', () => {
  let redis: OwnRedis;
  let h: Harness;

  beforeAll(async () => {
    redis = await startOwnRedis();
    h = await startHarness('queue', { REDIS_URL: redis.url });
  });

  afterAll(async () => {
    await h?.close();
    await redis?.stop();
  });

  const send = (tag: string) => {
    const body = commandBody();
    return post(`${h.base}/proxy`, { ...body, input: { script: { items: 2 }, tag } });
  };

  it('never answers 503 for a command that then runs: retried 503s run each command exactly once', async () => {
    // Fill the reader pool: concurrent commands each take a connection, and return it idle.
    const warm = await Promise.all(Array.from({ length: 6 }, (_, i) => send(`warm-${i}`)));
    expect(warm.map((r) => r.status)).toEqual(Array(6).fill(200));

    await redis.kill();
    await redis.start();

    const statuses: Record<string, number[]> = {};
    const tags = Array.from({ length: 14 }, (_, i) => `after-${i}`);
    await Promise.all(
      tags.map(async (tag) => {
        statuses[tag] = [];
        for (let attempt = 0; attempt < 100; attempt++) {
          const res = await send(tag);
          statuses[tag]!.push(res.status);
          if (res.status === 200) {
            expect(res.complete).toBe(true);
            expect(ndjsonItems(res.body)).toHaveLength(2);
            return;
          }
          // The only other answer allowed: the command did not run, run it again.
          expect(res.status).toBe(503);
          expect(JSON.parse(res.body).code).toBe('QUEUE_UNAVAILABLE');
          await delay(100);
        }
        throw new Error(`${tag} never succeeded: ${statuses[tag]!.join(',')}`);
      }),
    );
    // Clean-ups of withdrawn jobs have run by the time every retry succeeded; let a straggler worker poll once more.
    await delay(300);
    for (const tag of tags) {
      const runs = h.runner.executions.filter((e) => e.input.tag === tag);
      expect({ tag, runs: runs.length, answers: statuses[tag] }).toEqual({ tag, runs: 1, answers: statuses[tag] });
    }
  });
});
