import { openRedis, uniquePrefix, redisUrl } from './redis';
import { parseMonitorLine, redisMonitor } from './redis-monitor';
import { redisPing } from './redis-ping';
import { until } from './until';

describe('redisMonitor (raw MONITOR, used where ioredis monitor() lost its command queue)', () => {
  it('parses the quoting Redis writes: escaped quotes, backslashes, control and binary bytes', () => {
    const line = '+1795849734.375720 [0 127.0.0.1:43746] "SET" "k\\"q" "a\\\\b\\r\\n\\x01"';
    expect(parseMonitorLine(line)).toEqual({
      cmd: 'set',
      args: ['SET', 'k"q', 'a\\b\r\n\x01'],
      source: '127.0.0.1:43746',
      at: 1795849734375.72,
    });
    expect(parseMonitorLine('+OK')).toBeUndefined();
  });

  it('sees every command of another connection, in order, with that connection as the source', async () => {
    const monitor = await redisMonitor(redisUrl());
    const redis = openRedis();
    const key = `${uniquePrefix('mon')}:"x"\\y`;
    try {
      await redis.set(key, 'v\r\n');
      await redis.get(key);
      await redis.del(key);
      await until(
        'three commands seen',
        async () => monitor.seen.filter((e) => e.args[1] === key).length === 3,
        10_000,
      );
    } finally {
      monitor.close();
      await redis.quit();
    }
    const mine = monitor.seen.filter((e) => e.args[1] === key);
    expect(mine.map((e) => e.cmd)).toEqual(['set', 'get', 'del']);
    expect(mine[0]!.args[2]).toBe('v\r\n');
    expect(new Set(mine.map((e) => e.source)).size).toBe(1);
  });

  it('authenticates as the URL says (user and a password with a space) before PING or MONITOR', async () => {
    const admin = openRedis();
    const user = uniquePrefix('mon-user').replace(/:/g, '-');
    const u = new URL(redisUrl());
    u.username = user;
    u.password = encodeURIComponent('pass word');
    const key = uniquePrefix('mon-auth');
    try {
      await admin.call('ACL', 'SETUSER', user, 'on', '>pass word', '~*', '&*', '+@all');
      expect(await redisPing(u.toString())).toBe(true);
      const wrong = new URL(u.toString());
      wrong.password = 'nope';
      expect(await redisPing(wrong.toString())).toBe(false);
      const monitor = await redisMonitor(u.toString());
      try {
        await admin.set(key, '1');
        await until('the SET seen', async () => monitor.seen.some((e) => e.args[1] === key), 10_000);
      } finally {
        monitor.close();
      }
      // Only commands after MONITOR was on are reported, and AUTH's +OK was not taken for MONITOR's.
      expect(monitor.seen.filter((e) => e.args[1] === key).map((e) => e.cmd)).toEqual(['set']);
    } finally {
      await admin.call('ACL', 'DELUSER', user);
      await admin.del(key);
      await admin.quit();
    }
  });
});
