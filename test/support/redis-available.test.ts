import { openRedis, uniquePrefix } from './redis';
import { scaled } from './time-factor';

describe('test Redis', () => {
  it('is a real Redis that stores and expires keys', async () => {
    const r = openRedis();
    try {
      const key = `${uniquePrefix()}:k`;
      // No TTL while it is read back: a short one made the first read a race with the clock.
      await r.set(key, 'v');
      expect(await r.get(key)).toBe('v');
      expect(await r.pexpire(key, 20)).toBe(1);
      const end = Date.now() + scaled(10_000);
      while ((await r.get(key)) !== null && Date.now() < end) await new Promise((res) => setTimeout(res, 20));
      expect(await r.get(key)).toBeNull();
    } finally {
      await r.quit();
    }
  });
});
