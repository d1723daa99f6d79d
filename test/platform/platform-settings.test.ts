import { isFusionError } from '../../src/core/errors';
import { parseFusionConfig } from '../../src/core/config/fusion-config';
import { pageSizeFor, readPlatformSettings } from '../../src/platform/platform-settings';

const base = { baseurl: 'https://acme.api.example.com/', clientId: 'id-1', clientSecret: 's3cr3t-value' };

function configError(config: Record<string, unknown>): { message: string; field: unknown } {
  try {
    readPlatformSettings(config);
  } catch (e) {
    if (isFusionError(e, 'CONFIG_INVALID')) return { message: e.message, field: e.details.field };
    throw e;
  }
  throw new Error('expected CONFIG_INVALID');
}

describe('readPlatformSettings', () => {
  it('applies the documented defaults and trims the base URL', () => {
    expect(readPlatformSettings(base)).toEqual({
      baseurl: 'https://acme.api.example.com',
      clientId: 'id-1',
      clientSecret: 's3cr3t-value',
      enableQueue: true,
      maxConcurrentRequests: 10,
      requestsPerSecond: 10,
      enableBatching: true,
      batchSize: 250,
      provisioningTimeout: 300,
      sources: [],
    });
  });

  it('accepts numeric strings and boolean strings from form fields', () => {
    const s = readPlatformSettings({
      ...base,
      requestsPerSecond: '20',
      enableQueue: 'false',
      batchSize: 500,
      sources: ['HR', 'AD'],
    });
    expect(s.requestsPerSecond).toBe(20);
    expect(s.enableQueue).toBe(false);
    expect(s.batchSize).toBe(500);
    expect(s.sources).toEqual(['HR', 'AD']);
  });

  it.each([
    [{ baseurl: 'ftp://x' }, 'baseurl'],
    [{ baseurl: 'not a url' }, 'baseurl'],
    [{ clientId: '' }, 'clientId'],
    [{ requestsPerSecond: 0 }, 'requestsPerSecond'],
    [{ requestsPerSecond: 2.5 }, 'requestsPerSecond'],
    [{ maxConcurrentRequests: 'ten' }, 'maxConcurrentRequests'],
    [{ batchSize: -1 }, 'batchSize'],
    [{ provisioningTimeout: 0 }, 'provisioningTimeout'],
    [{ enableQueue: 'yes' }, 'enableQueue'],
    [{ sources: 'HR' }, 'sources'],
  ])('rejects %j naming the field, value and what is allowed', (patch, field) => {
    const err = configError({ ...base, ...patch });
    expect(err.field).toBe(field);
    expect(err.message).toContain(field);
    expect(err.message).toMatch(/allowed /);
  });

  it('never shows the secret in its message', () => {
    const err = configError({ ...base, clientSecret: 42 });
    expect(err.field).toBe('clientSecret');
    expect(err.message).not.toContain('42');
    expect(configError({ ...base, clientSecret: '   ' }).message).toContain('clientSecret');
  });

  it('clamps the page size to the endpoint maximum, and uses the maximum without batching', () => {
    expect(pageSizeFor({ enableBatching: true, batchSize: 500 }, 250)).toBe(250);
    expect(pageSizeFor({ enableBatching: true, batchSize: 50 }, 250)).toBe(50);
    expect(pageSizeFor({ enableBatching: false, batchSize: 50 }, 250)).toBe(250);
  });
});

describe('one owner for the API-use settings', () => {
  const API_USE = [
    'baseurl',
    'clientId',
    'clientSecret',
    'enableQueue',
    'maxConcurrentRequests',
    'requestsPerSecond',
    'enableBatching',
    'batchSize',
    'provisioningTimeout',
  ] as const;
  const full = { ...base, sources: ['HR'] };

  function problemsOf(read: () => unknown): string[] {
    try {
      read();
    } catch (e) {
      if (isFusionError(e, 'CONFIG_INVALID')) {
        return (e.details.problems as { field: string; allowed: string }[]).map((p) => `${p.field}: ${p.allowed}`);
      }
      throw e;
    }
    return [];
  }

  it.each([
    {},
    { requestsPerSecond: '40', maxConcurrentRequests: 100, batchSize: '1', provisioningTimeout: 86400 },
    { enableQueue: 'false', enableBatching: false, clientId: '  id-2  ', baseurl: 'http://localhost:8080///' },
  ])('the connector configuration and the platform adapter read %j alike', (patch) => {
    const connector = parseFusionConfig({ ...full, ...patch });
    const platform = readPlatformSettings({ ...full, ...patch });
    for (const key of API_USE) expect([key, connector[key]]).toEqual([key, platform[key]]);
  });

  it.each([
    { requestsPerSecond: 1001 },
    { maxConcurrentRequests: 0 },
    { batchSize: 10001 },
    { provisioningTimeout: 86401 },
    { enableBatching: 'no' },
    { baseurl: 'https://acme.api.example.com/?tenant=x' },
    { baseurl: 'https://acme.api.example.com/#x' },
  ])('both reject %j with the same problem', (patch) => {
    const fromConnector = problemsOf(() => parseFusionConfig({ ...full, ...patch }));
    const fromPlatform = problemsOf(() => readPlatformSettings({ ...full, ...patch }));
    expect(fromPlatform).toHaveLength(1);
    expect(fromConnector).toEqual(fromPlatform);
  });
});
