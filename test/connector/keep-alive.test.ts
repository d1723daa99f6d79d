/**
 * #28 item 7: the connector keeps a silent command alive itself. Its 30 s timer beside a 30 s
 * throttle could swallow a tick (a keepAlive sent by a heartbeat at t = 1 ms made the timer's at
 * t = 30 s look too early), leaving a 60 s gap. Driven on jest's clock through the SDK's _exec, at
 * the default interval.
 */
import { Writable } from 'node:stream';
import { _withConfig, type Context, type RawResponse } from '@sailpoint/connector-sdk';
import type { CommandRunner } from '../../src/core/command-runner';
import { createFusionConnector, DEFAULT_KEEP_ALIVE_INTERVAL_MS } from '../../src/connector';
import { captureLogger } from '../proxy-client/capture-logger';

afterEach(() => jest.useRealTimers());

it('no gap between keepAlives is longer than the interval, whatever sent the previous one', async () => {
  jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
  const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
  // Progress 1 ms in (a keepAlive then), then silence for 200 s, then the answer.
  const runner: CommandRunner = (_t, _i, _c, ctx) =>
    (async function* slow() {
      await sleep(1);
      ctx.progress();
      await sleep(200_000);
      yield { status: 'ok' };
    })();
  const c = createFusionConnector({ logger: captureLogger(), env: {}, runner: () => runner });
  const keepAlives: number[] = [];
  const started = Date.now();
  const writable = new Writable({
    objectMode: true,
    write(chunk: RawResponse, _enc, cb) {
      if (chunk.type === 'keepAlive') keepAlives.push(Date.now() - started);
      cb();
    },
  });
  const config = { baseurl: 'https://x.example.com', clientId: 'a', clientSecret: 'b' };
  const done = _withConfig(config, () =>
    c._exec(
      'std:test-connection',
      { commandType: 'std:test-connection', version: 1 } as unknown as Context,
      {},
      writable,
    ),
  );
  await jest.advanceTimersByTimeAsync(201_000);
  await done;
  const times = [0, ...keepAlives, 200_001];
  const gaps = times.slice(1).map((t, i) => t - times[i]!);
  expect(keepAlives.length).toBeGreaterThanOrEqual(6);
  expect(Math.max(...gaps)).toBeLessThanOrEqual(DEFAULT_KEEP_ALIVE_INTERVAL_MS);
});
