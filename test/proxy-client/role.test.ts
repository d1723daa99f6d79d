import { detectRole, isProxyEnabled, proxyEnabledWithoutUrl } from '../../src/proxy-client/role';

const URL_ = 'https://proxy.example.com/fusion';

describe('detectRole: the spec table', () => {
  it('row 1: proxyEnabled true AND PROXY_PASSWORD set -> proxy server (even with a proxy URL)', () => {
    expect(detectRole({ proxyEnabled: true }, { PROXY_PASSWORD: 'server-secret-123456' })).toBe('proxy-server');
    expect(detectRole({ proxyEnabled: true, proxyUrl: URL_ }, { PROXY_PASSWORD: 'server-secret-123456' })).toBe(
      'proxy-server',
    );
  });

  it('row 2: proxyEnabled true AND proxy URL set AND no PROXY_PASSWORD -> proxy client', () => {
    expect(detectRole({ proxyEnabled: true, proxyUrl: URL_ }, {})).toBe('proxy-client');
  });

  it('row 3: otherwise -> direct', () => {
    expect(detectRole({}, {})).toBe('direct');
    expect(detectRole({ proxyEnabled: false, proxyUrl: URL_ }, {})).toBe('direct');
    expect(detectRole({ proxyEnabled: false, proxyUrl: URL_ }, { PROXY_PASSWORD: 'x-secret' })).toBe('direct');
    expect(detectRole({ proxyEnabled: true }, {})).toBe('direct');
  });
});

describe('detectRole: edge cases (documented in src/proxy-client/role.ts)', () => {
  it('an empty or blank PROXY_PASSWORD is not set', () => {
    expect(detectRole({ proxyEnabled: true, proxyUrl: URL_ }, { PROXY_PASSWORD: '' })).toBe('proxy-client');
    expect(detectRole({ proxyEnabled: true, proxyUrl: URL_ }, { PROXY_PASSWORD: '   ' })).toBe('proxy-client');
    expect(detectRole({ proxyEnabled: true }, { PROXY_PASSWORD: '' })).toBe('direct');
  });

  it('an empty or blank proxy URL, or a non-string one, is not set', () => {
    expect(detectRole({ proxyEnabled: true, proxyUrl: '' }, {})).toBe('direct');
    expect(detectRole({ proxyEnabled: true, proxyUrl: '  ' }, {})).toBe('direct');
    expect(detectRole({ proxyEnabled: true, proxyUrl: 42 }, {})).toBe('direct');
    expect(detectRole({ proxyEnabled: true, proxyUrl: null }, {})).toBe('direct');
  });

  it('proxyEnabled as the exact string "true" counts as true (as in the core config reader); nothing else does', () => {
    expect(detectRole({ proxyEnabled: 'true', proxyUrl: URL_ }, {})).toBe('proxy-client');
    expect(detectRole({ proxyEnabled: 'true' }, { PROXY_PASSWORD: 'x-secret' })).toBe('proxy-server');
    for (const v of ['false', 'TRUE', ' true', 'True', '1', 'yes', 'on', 1, null, undefined, {}, []]) {
      expect(isProxyEnabled(v)).toBe(false);
      expect(detectRole({ proxyEnabled: v, proxyUrl: URL_ }, { PROXY_PASSWORD: 'x-secret' })).toBe('direct');
    }
  });

  it('flags proxy mode switched on without a URL (the connector warns about it)', () => {
    expect(proxyEnabledWithoutUrl({ proxyEnabled: true }, {})).toBe(true);
    expect(proxyEnabledWithoutUrl({ proxyEnabled: true, proxyUrl: URL_ }, {})).toBe(false);
    expect(proxyEnabledWithoutUrl({ proxyEnabled: true }, { PROXY_PASSWORD: 'x-secret' })).toBe(false);
    expect(proxyEnabledWithoutUrl({ proxyEnabled: false }, {})).toBe(false);
  });
});
