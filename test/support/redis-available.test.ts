import { openRedis, uniquePrefix } from './redis';

describe('test Redis', () => {
  it('is a real Redis that stores and expires keys', async () => {
    const r = openRedis();
    try {
      const key = `${uniquePrefix()}:k`;
      await r.set(key, 'v', 'PX', 50);
      expect(await r.get(key)).toBe('v');
      await new Promise((res) => setTimeout(res, 80));
      expect(await r.get(key)).toBeNull();
    } finally {
      await r.quit();
    }
  });
});
