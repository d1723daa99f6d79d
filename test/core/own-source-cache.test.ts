import { OWN_SOURCE_TTL_MS, OwnSourceCache } from '../../src/core/aggregation/own-source-cache';

const tenant = (instance: string, host = 'acme') => ({
  baseurl: `https://${host}.api.example.com`,
  spConnectorInstanceId: instance,
});

describe('OwnSourceCache', () => {
  it('vouches for an id for its lifetime after the last listing, then forgets it', () => {
    let now = 0;
    const cache = new OwnSourceCache(1_000, () => now);
    cache.remember(tenant('i1'), { id: 's1', name: 'Fusion' });
    now = 999;
    expect(cache.get(tenant('i1'))).toEqual({ id: 's1', name: 'Fusion' });
    // Another listing starts the lifetime again.
    cache.remember(tenant('i1'), { id: 's1', name: 'Fusion' });
    now = 1_998;
    expect(cache.get(tenant('i1'))?.id).toBe('s1');
    now = 1_999;
    expect(cache.get(tenant('i1'))).toBeUndefined();
  });

  it('lives ten minutes by default', () => {
    let now = 0;
    const cache = new OwnSourceCache(undefined, () => now);
    cache.remember(tenant('i1'), { id: 's1', name: 'Fusion' });
    now = OWN_SOURCE_TTL_MS - 1;
    expect(cache.get(tenant('i1'))?.id).toBe('s1');
    now = OWN_SOURCE_TTL_MS;
    expect(cache.get(tenant('i1'))).toBeUndefined();
  });

  it('keeps tenants and instances apart; the host is the tenant, whatever the URL spelling', () => {
    const cache = new OwnSourceCache();
    cache.remember(tenant('i1'), { id: 's1', name: 'A' });
    cache.remember(tenant('i1', 'globex'), { id: 's2', name: 'B' });
    expect(cache.get(tenant('i2'))).toBeUndefined();
    expect(cache.get(tenant('i1', 'globex'))?.id).toBe('s2');
    expect(cache.get({ baseurl: 'https://ACME.api.example.com/', spConnectorInstanceId: 'i1' })?.id).toBe('s1');
  });

  it('forgets an id only while the entry still names it: a newer listing stays', () => {
    const cache = new OwnSourceCache();
    cache.remember(tenant('i1'), { id: 'old', name: 'A' });
    cache.remember(tenant('i1'), { id: 'new', name: 'A' });
    cache.forget(tenant('i1'), 'old');
    expect(cache.get(tenant('i1'))?.id).toBe('new');
    cache.forget(tenant('i1'), 'new');
    expect(cache.get(tenant('i1'))).toBeUndefined();
  });

  it('holds at most 1,000 instances, dropping the one confirmed longest ago', () => {
    const cache = new OwnSourceCache();
    for (let i = 0; i < 1_000; i++) cache.remember(tenant(`i${i}`), { id: `s${i}`, name: 'x' });
    // i0 is confirmed again, so i1 is now the oldest.
    cache.remember(tenant('i0'), { id: 's0', name: 'x' });
    cache.remember(tenant('extra'), { id: 'sx', name: 'x' });
    expect(cache.get(tenant('i1'))).toBeUndefined();
    expect(cache.get(tenant('i0'))?.id).toBe('s0');
    expect(cache.get(tenant('i2'))?.id).toBe('s2');
    expect(cache.get(tenant('extra'))?.id).toBe('sx');
  });
});
