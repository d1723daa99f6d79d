import { parseFusionConfig } from '../../src/core/config/fusion-config';
import { isFusionError } from '../../src/core/errors';

const valid = (): Record<string, unknown> => ({
  baseurl: 'https://acme.api.example.com',
  clientId: 'cid',
  clientSecret: 'super-secret-value',
  sources: ['HR', 'AD'],
});

function problem(
  patch: Record<string, unknown>,
  code: 'CONFIG_INVALID' | 'MATCHING_INVALID' = 'CONFIG_INVALID',
): string {
  try {
    parseFusionConfig({ ...valid(), ...patch });
  } catch (e) {
    if (isFusionError(e, code)) return e.message;
    throw e;
  }
  throw new Error(`accepted ${JSON.stringify(patch)}`);
}

describe('parseFusionConfig', () => {
  test('defaults', () => {
    const c = parseFusionConfig(valid());
    expect(c).toMatchObject({
      includeIdentities: true,
      identityScopeQuery: '*',
      attributeMerge: 'first',
      maxAttempts: 100,
      provisioningTimeout: 300,
      enableQueue: true,
      maxConcurrentRequests: 10,
      requestsPerSecond: 10,
      enableBatching: true,
      batchSize: 250,
      aggregationBatchSize: 0,
      concurrencyCheckEnabled: true,
      reset: false,
      logLevel: 'info',
      externalLoggingEnabled: false,
      externalLoggingLevel: 'info',
      fusionOwnerIsGlobalReviewer: false,
      fusionFormExpirationDays: 7,
      proxyEnabled: false,
    });
    expect(c.sourceOptions).toEqual({
      HR: { forceAggregation: false, accountFilter: '' },
      AD: { forceAggregation: false, accountFilter: '' },
    });
  });

  test('accepts every setting with a valid value', () => {
    const c = parseFusionConfig({
      ...valid(),
      proxyEnabled: true,
      proxyUrl: 'https://proxy.example.com/fusion',
      proxyPassword: 'p'.repeat(20),
      sourceOptions: { HR: { forceAggregation: true, accountFilter: 'attributes.type ne "bot"' } },
      includeIdentities: false,
      identityScopeQuery: '',
      accountFilter: 'disabled eq false',
      attributeMerge: 'list',
      attributeMaps: [
        { newAttribute: 'groups', existingAttributes: ['memberOf'], attributeMerge: 'source', source: 'AD' },
      ],
      attributeDefinitions: [
        {
          name: 'uid',
          expression: '$first$counter',
          type: 'unique',
          case: 'lower',
          normalize: true,
          spaces: true,
          maxLength: 8,
          digits: 2,
        },
      ],
      maxAttempts: '250',
      fusionOwnerIsGlobalReviewer: true,
      fusionFormExpirationDays: 14,
      provisioningTimeout: 900,
      enableQueue: false,
      maxConcurrentRequests: 20,
      requestsPerSecond: 15,
      enableBatching: false,
      batchSize: 500,
      aggregationBatchSize: 50,
      concurrencyCheckEnabled: false,
      reset: true,
      logLevel: 'Debug',
      externalLoggingEnabled: true,
      externalLoggingUrl: 'http://logs.example.com/in',
      externalLoggingLevel: 'Warn',
    });
    expect(c.maxAttempts).toBe(250);
    expect(c.logLevel).toBe('debug');
    expect(c.externalLoggingLevel).toBe('warn');
    expect(c.attributeDefinitions[0]).toMatchObject({ type: 'unique', digits: 2, maxLength: 8, counterStart: 1 });
    expect(c.attributeMaps[0]).toEqual({
      newAttribute: 'groups',
      existingAttributes: ['memberOf'],
      attributeMerge: 'source',
      source: 'AD',
    });
  });

  const invalid: [string, Record<string, unknown>, RegExp][] = [
    ['baseurl missing', { baseurl: undefined }, /baseurl = undefined: allowed an http\(s\) URL \(required\)/],
    ['baseurl not a URL', { baseurl: 'acme' }, /baseurl = "acme"/],
    ['clientId empty', { clientId: '' }, /clientId = "": allowed a non-empty string/],
    ['clientSecret number', { clientSecret: 42 }, /clientSecret = \[redacted\]/],
    ['proxyEnabled string', { proxyEnabled: 'yes' }, /proxyEnabled = "yes": allowed a boolean/],
    [
      'proxyUrl required when enabled',
      { proxyEnabled: true, proxyPassword: 'x'.repeat(16) },
      /proxyUrl = undefined: allowed an http\(s\) URL \(required\)/,
    ],
    [
      'proxyPassword required when enabled',
      { proxyEnabled: true, proxyUrl: 'https://p.example.com' },
      /proxyPassword = \[redacted\]/,
    ],
    ['proxyPassword not a string', { proxyPassword: 7 }, /proxyPassword = \[redacted\]: allowed a string/],
    ['spConnectorInstanceId', { spConnectorInstanceId: 5 }, /spConnectorInstanceId = 5/],
    ['sources missing', { sources: undefined }, /sources = undefined: allowed a non-empty list/],
    ['sources empty', { sources: [] }, /sources = \[\]: allowed a non-empty list/],
    ['sources duplicate', { sources: ['HR', 'HR'] }, /"HR" appears twice/],
    ['sources not strings', { sources: ['HR', 3] }, /sources = \["HR",3\]/],
    [
      'sourceOptions unknown source (case-sensitive)',
      { sourceOptions: { hr: { forceAggregation: true } } },
      /sourceOptions.hr = "hr": allowed a name listed in sources \("HR", "AD"\)/,
    ],
    [
      'sourceOptions.forceAggregation',
      { sourceOptions: { HR: { forceAggregation: 1 } } },
      /sourceOptions.HR.forceAggregation = 1/,
    ],
    [
      'sourceOptions.accountFilter syntax',
      { sourceOptions: { HR: { accountFilter: 'name zz "a"' } } },
      /sourceOptions.HR.accountFilter = .*unknown operator "zz"/,
    ],
    ['includeIdentities', { includeIdentities: 'no' }, /includeIdentities = "no"/],
    ['identityScopeQuery empty', { identityScopeQuery: ' ' }, /identityScopeQuery = " ": allowed a search query/],
    ['accountFilter', { accountFilter: 'attributes.x eq' }, /accountFilter = "attributes.x eq".*expected a value/],
    ['attributeMerge', { attributeMerge: 'last' }, /attributeMerge = "last": allowed one of first, list, concatenate/],
    ['attributeMaps not a list', { attributeMaps: {} }, /attributeMaps = \{\}: allowed a list of objects/],
    [
      'attributeMaps.newAttribute',
      { attributeMaps: [{ existingAttributes: ['a'] }] },
      /attributeMaps\[0\].newAttribute = undefined/,
    ],
    [
      'attributeMaps.existingAttributes',
      { attributeMaps: [{ newAttribute: 'x', existingAttributes: 'a' }] },
      /attributeMaps\[0\].existingAttributes = "a"/,
    ],
    [
      'attributeMaps.attributeMerge',
      { attributeMaps: [{ newAttribute: 'x', existingAttributes: ['a'], attributeMerge: 'sum' }] },
      /attributeMaps\[0\].attributeMerge = "sum": allowed one of first, list, concatenate, source/,
    ],
    [
      'attributeMaps.source unknown',
      { attributeMaps: [{ newAttribute: 'x', existingAttributes: ['a'], attributeMerge: 'source', source: 'ad' }] },
      /attributeMaps\[0\].source = "ad"/,
    ],
    [
      'attributeDefinitions.name',
      { attributeDefinitions: [{ expression: '$a' }] },
      /attributeDefinitions\[0\].name = undefined/,
    ],
    [
      'attributeDefinitions.expression',
      { attributeDefinitions: [{ name: 'a' }] },
      /attributeDefinitions\[0\].expression = undefined/,
    ],
    [
      'attributeDefinitions.type',
      { attributeDefinitions: [{ name: 'a', expression: '$a', type: 'random' }] },
      /attributeDefinitions\[0\].type = "random": allowed one of normal, unique, uuid, counter/,
    ],
    [
      'attributeDefinitions.case',
      { attributeDefinitions: [{ name: 'a', expression: '$a', case: 'title' }] },
      /attributeDefinitions\[0\].case = "title"/,
    ],
    [
      'attributeDefinitions.normalize',
      { attributeDefinitions: [{ name: 'a', expression: '$a', normalize: 'y' }] },
      /attributeDefinitions\[0\].normalize = "y"/,
    ],
    [
      'attributeDefinitions.spaces',
      { attributeDefinitions: [{ name: 'a', expression: '$a', spaces: 2 }] },
      /attributeDefinitions\[0\].spaces = 2/,
    ],
    [
      'attributeDefinitions.maxLength',
      { attributeDefinitions: [{ name: 'a', expression: '$a', maxLength: 0 }] },
      /attributeDefinitions\[0\].maxLength = 0: allowed an integer from 1 to 10000/,
    ],
    [
      'attributeDefinitions.counterStart',
      { attributeDefinitions: [{ name: 'a', expression: '$a', counterStart: -1 }] },
      /counterStart = -1/,
    ],
    [
      'attributeDefinitions.digits',
      { attributeDefinitions: [{ name: 'a', expression: '$a', digits: 1.5 }] },
      /digits = 1.5: allowed an integer from 1 to 20/,
    ],
    [
      'attributeDefinitions.refresh',
      { attributeDefinitions: [{ name: 'a', expression: '$a', refresh: 'x' }] },
      /refresh = "x"/,
    ],
    [
      'attributeDefinitions duplicate',
      {
        attributeDefinitions: [
          { name: 'a', expression: '$a' },
          { name: 'a', expression: '$b' },
        ],
      },
      /attributeDefinitions\[1\].name = "a": allowed a name not already defined/,
    ],
    ['maxAttempts', { maxAttempts: 0 }, /maxAttempts = 0: allowed an integer from 1 to 100000/],
    ['fusionOwnerIsGlobalReviewer', { fusionOwnerIsGlobalReviewer: 'on' }, /fusionOwnerIsGlobalReviewer = "on"/],
    ['fusionFormExpirationDays', { fusionFormExpirationDays: 0 }, /fusionFormExpirationDays = 0/],
    [
      'provisioningTimeout',
      { provisioningTimeout: 'soon' },
      /provisioningTimeout = "soon": allowed an integer from 1 to 86400/,
    ],
    ['enableQueue', { enableQueue: 1 }, /enableQueue = 1/],
    [
      'maxConcurrentRequests',
      { maxConcurrentRequests: 0 },
      /maxConcurrentRequests = 0: allowed an integer from 1 to 100/,
    ],
    ['requestsPerSecond', { requestsPerSecond: -5 }, /requestsPerSecond = -5: allowed an integer from 1 to 1000/],
    ['enableBatching', { enableBatching: 'true!' }, /enableBatching = "true!"/],
    ['batchSize', { batchSize: 100000 }, /batchSize = 100000: allowed an integer from 1 to 10000/],
    ['aggregationBatchSize', { aggregationBatchSize: -1 }, /aggregationBatchSize = -1/],
    ['concurrencyCheckEnabled', { concurrencyCheckEnabled: 'off' }, /concurrencyCheckEnabled = "off"/],
    ['reset', { reset: 'maybe' }, /reset = "maybe"/],
    ['logLevel', { logLevel: 'trace' }, /logLevel = "trace": allowed one of error, warn, info, debug/],
    ['externalLoggingEnabled', { externalLoggingEnabled: 'x' }, /externalLoggingEnabled = "x"/],
    [
      'externalLoggingUrl required',
      { externalLoggingEnabled: true },
      /externalLoggingUrl = undefined: allowed an http\(s\) URL \(required\)/,
    ],
    ['externalLoggingUrl bad', { externalLoggingUrl: 'ftp://x' }, /externalLoggingUrl = "ftp:\/\/x"/],
    ['externalLoggingLevel', { externalLoggingLevel: 'verbose' }, /externalLoggingLevel = "verbose"/],
  ];

  test.each(invalid)('rejects %s', (_name, patch, expected) => {
    expect(problem(patch)).toMatch(expected);
  });

  test('lists every problem at once and never echoes a secret', () => {
    const message = problem({ clientSecret: ['super-secret-value'], batchSize: 0, logLevel: 'x' });
    expect(message).toMatch(/clientSecret/);
    expect(message).toMatch(/batchSize/);
    expect(message).toMatch(/logLevel/);
    expect(message).not.toContain('super-secret-value');
  });
});

describe('matching section', () => {
  test('is parsed by the matching engine parser', () => {
    const c = parseFusionConfig({
      ...valid(),
      matching: {
        attributes: [{ attribute: 'displayName', algorithm: 'jaro-winkler', threshold: 90, mandatory: true }],
        reviewTopK: 5,
      },
    });
    expect(c.matching).toEqual({
      attributes: [{ attribute: 'displayName', algorithm: 'jaro-winkler', threshold: 90, mandatory: true }],
      reviewTopK: 5,
      model: 'rules',
      probabilityThreshold: 0.9,
      maxReviewShare: 0.5,
    });
  });

  test('invalid matching values are MATCHING_INVALID naming the one setting and its value', () => {
    const rules = (r: Record<string, unknown>): Record<string, unknown> => ({
      matching: { attributes: [{ attribute: 'y', algorithm: 'exact', threshold: 90 }, r] },
    });
    expect(problem(rules({ attribute: 'x', algorithm: 'soundex', threshold: 90 }), 'MATCHING_INVALID')).toBe(
      'Invalid matching settings: matching.attributes[1].algorithm = "soundex": allowed one of name-matcher, levenshtein, jaro-winkler, dice, double-metaphone, exact',
    );
    expect(problem(rules({ attribute: 'x', algorithm: 'exact', threshold: 190 }), 'MATCHING_INVALID')).toBe(
      'Invalid matching settings: matching.attributes[1].threshold = 190: allowed a number from 0 to 100',
    );
  });

  test('invalid matching values beside other invalid settings: one CONFIG_INVALID listing both', () => {
    expect(
      problem({ maxAttempts: 0, matching: { attributes: [{ attribute: 'x', algorithm: 'exact', threshold: 190 }] } }),
    ).toMatch(/matching.attributes\[0\].threshold = 190: allowed a number from 0 to 100; maxAttempts = 0/);
  });
});
