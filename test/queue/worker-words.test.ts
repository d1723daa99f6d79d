/**
 * #28 item 6: what a worker says must be what happened. A job whose BullMQ key vanished while it ran
 * (removed, evicted, its lock lapsed in a Redis stall) is not a Redis outage.
 */
import { createLogger } from '../../src/observability/logger';
import { CommandQueue } from '../../src/queue/command-queue';
import { CommandWorker } from '../../src/queue/command-worker';
import { JobCrypto } from '../../src/queue/job-crypto';
import { READER_LEASE_MS, resultKeys } from '../../src/queue/result-keys';
import { ScriptedRunner } from '../support/scripted-runner';
import { openRedis, redisUrl, uniquePrefix } from '../support/redis';
import { HARNESS_JOB_KEY, commandBody, delay } from '../server/harness';
import { scaled } from '../support/time-factor';

jest.setTimeout(scaled(60_000));

it('a job whose key vanished while it ran is reported as such, not as "Redis cannot be used"', async () => {
  const redis = openRedis();
  const lines: string[] = [];
  const logger = createLogger({ level: 'info', destination: { write: (s: string) => void lines.push(s) } });
  const runner = new ScriptedRunner();
  const queueName = uniquePrefix('words');
  const queue = new CommandQueue(redis, queueName, JobCrypto.fromKey(HARNESS_JOB_KEY));
  const worker = new CommandWorker({
    redisUrl: redisUrl(),
    runner: runner.runner,
    crypto: JobCrypto.fromKey(HARNESS_JOB_KEY),
    logger,
    concurrency: 1,
    quickConcurrency: 1,
    queueName,
  });
  try {
    const body = commandBody({ items: 2, gateAfterItems: 1, gate: 'go' });
    await redis.set(resultKeys(queueName, 'vanish').reader, '1', 'PX', READER_LEASE_MS);
    await queue.add({
      type: 'std:account:list',
      input: body.input as Record<string, unknown>,
      config: body.config as Record<string, unknown>,
      requestId: 'vanish',
    });
    await runner.waitFor((e) => e[0]?.emitted === 1, 30_000);
    // The job's hash goes away under the running job (an eviction, a removal by an operator).
    await redis.del(`bull:${queueName}:vanish`);
    runner.release('go');
    const end = Date.now() + scaled(20_000);
    while (!lines.some((l) => /vanish/.test(l) && /"level":"(warn|error)"/.test(l)) && Date.now() < end)
      await delay(25);
    const text = lines.join('');
    expect(text).not.toMatch(/cannot be used/);
    expect(
      lines.some(
        (l) =>
          /vanish/.test(l) &&
          /"level":"warn"/.test(l) &&
          /no longer in Redis as BullMQ expects.*outcome was already written/.test(l),
      ),
    ).toBe(true);
  } finally {
    await worker.close(1000);
    await queue.queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
    await redis.quit();
  }
});
