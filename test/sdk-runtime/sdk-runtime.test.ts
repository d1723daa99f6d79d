/**
 * Acceptance through the SDK's own runtimes, the way the platform drives the connector: the SDK dev
 * server `spcx` over HTTP, and `_exec` of the upload package's `index.js` (the zip `npm run
 * pack-zip` writes) with the configuration in CONNECTOR_CONFIG. All nine commands, in direct mode
 * against the simulator and in proxy-client mode against an embedded and a queue-mode proxy
 * server, at every log level including unset (the platform's default). It asserts what the
 * platform receives: output items, keepAlive and the error type of a failure.
 */
import type { Redis } from 'ioredis';
import { createLogger } from '../../src/observability/logger';
import { proxyItems } from '../../src/proxy-client';
import { createProductionRunner } from '../../src/runtime/production-runner';
import { loadEnv } from '../../src/server/env';
import { startServer, type RunningServer } from '../../src/server/server';
import { startSimulator, type RunningSimulator } from '../../src/simulator';
import { runPlatformAggregation } from '../../src/simulator/platform-aggregation';
import { openRedis, redisUrl, uniquePrefix } from '../support/redis';
import { buildForSpcx, execInChild, packAndExtract, type ExecCommand, type ExecResult } from './connector-build';
import { spcxInvoke, startSpcx, type Spcx } from './spcx';
import { LOGIN_DEFINITION, tenantConnection } from '../support/tenant-config';
import { scaled } from '../support/time-factor';

jest.setTimeout(scaled(120_000));

const PASSWORD = 'sdk-runtime-proxy-password-5521';
const LEVELS: Array<string | undefined> = [undefined, 'error', 'warn', 'info', 'debug'];
type Role = 'direct' | 'proxy-embedded' | 'proxy-queue';
const ROLES: Role[] = ['direct', 'proxy-embedded', 'proxy-queue'];

let sim: RunningSimulator;
let embedded: RunningServer;
let queued: RunningServer;
let redis: Redis;
let spcxFile: string;
let zipDir: string;
let zipFiles: string[];
const prefix = `${uniquePrefix('sdk-rt')}:`;

function baseConfig(): Record<string, unknown> {
  return {
    ...tenantConnection(sim),
    requestsPerSecond: 1000,
    maxConcurrentRequests: 20,
    attributeMaps: [{ newAttribute: 'departments', existingAttributes: ['department'], attributeMerge: 'list' }],
    attributeDefinitions: [LOGIN_DEFINITION, { name: 'title', expression: 'Member of $department' }],
  };
}

function configFor(role: Role): Record<string, unknown> {
  if (role === 'direct') return baseConfig();
  const server = role === 'proxy-embedded' ? embedded : queued;
  return { ...baseConfig(), proxyEnabled: true, proxyUrl: `${server.url}/proxy`, proxyPassword: PASSWORD };
}

const connectorIds = (): string[] =>
  [...sim.tenant.accountsOfSource(sim.tenant.meta.fusionSourceId!).values()].map((a) => a.nativeIdentity);

/** The nine commands (and a read of a missing account), in the order a platform might send them. */
function scenario(role: Role): ExecCommand[] {
  const config = configFor(role);
  const id = connectorIds()[0]!;
  return [
    { type: 'std:test-connection', input: {}, config },
    { type: 'std:account:list', input: {}, config },
    { type: 'std:account:read', input: { identity: id }, config },
    { type: 'std:account:read', input: { identity: '00000000-0000-4000-8000-000000000000' }, config },
    { type: 'std:account:disable', input: { key: { simple: { id } }, identity: id }, config },
    { type: 'std:account:enable', input: { key: { simple: { id } }, identity: id }, config },
    {
      type: 'std:account:create',
      input: { attributes: { firstName: 'Zora', lastName: 'Quill', department: 'Research' } },
      config,
    },
    {
      type: 'std:account:update',
      input: { identity: id, changes: [{ op: 'Set', attribute: 'title', value: 'Chief' }] },
      config,
    },
    { type: 'std:account:discover-schema', input: {}, config },
    { type: 'std:entitlement:list', input: { type: 'group' }, config },
  ];
}

/** What the platform must have received for each command of the scenario. */
function expectScenario(results: ExecResult[], label: string): void {
  const ids = connectorIds();
  const [test, list, read, missing, disable, enable, create, update, schema, entitlements] = results.map((r, i) => ({
    ...r,
    label: `${label} #${i}`,
  }));
  for (const r of [test, list, read, disable, enable, create, update, schema, entitlements])
    expect({ label: r!.label, error: r!.error }).toEqual({ label: r!.label, error: undefined });
  expect(test!.outputs).toEqual([expect.objectContaining({ status: 'success' })]);
  expect(list!.outputs.map((o) => o.identity).sort()).toEqual([...ids].sort());
  expect(list!.outputs.every((o) => typeof o.attributes === 'object' && o.attributes !== null)).toBe(true);
  expect(read!.outputs).toEqual([expect.objectContaining({ identity: ids[0], disabled: false })]);
  // A missing account is notFound in every role: the code crosses the proxy (error-code table).
  expect({ label: missing!.label, type: missing!.error?.type }).toEqual({ label: missing!.label, type: 'notFound' });
  expect(missing!.outputs).toEqual([]);
  expect(disable!.outputs).toEqual([expect.objectContaining({ identity: ids[0], disabled: true })]);
  expect(enable!.outputs).toEqual([expect.objectContaining({ identity: ids[0], disabled: false })]);
  expect(create!.outputs).toEqual([
    expect.objectContaining({
      identity: expect.any(String),
      attributes: expect.objectContaining({ firstName: 'Zora' }),
    }),
  ]);
  expect((update!.outputs[0]?.attributes as Record<string, unknown> | undefined)?.title).toBe('Chief');
  expect(schema!.outputs).toEqual([expect.objectContaining({ identityAttribute: 'id', displayAttribute: 'name' })]);
  expect(entitlements!.outputs.length).toBeGreaterThan(1);
}

beforeAll(async () => {
  sim = await startSimulator({
    seed: 23,
    tenant: { identities: 24, accountsPerSource: 12, machineRate: 0 },
    rateLimit: false,
    logRequests: false,
  });
  redis = openRedis();
  const quiet = createLogger({ level: 'error', destination: { write: () => undefined } });
  const common = {
    PORT: '0',
    HOST: '127.0.0.1',
    PROXY_PASSWORD: PASSWORD,
    PROXY_PATH: '/proxy',
    SHUTDOWN_GRACE_MS: '2000',
    METRICS_ENABLED: 'false',
  };
  embedded = await startServer(loadEnv(common), { runner: createProductionRunner(), logger: quiet });
  queued = await startServer(
    loadEnv({
      ...common,
      REDIS_URL: redisUrl(),
      QUEUE_NAME: uniquePrefix('sdk-rt-q'),
      JOB_ENCRYPTION_KEY: 'c'.repeat(64),
    }),
    {
      runner: createProductionRunner({ redis, keyPrefix: prefix }),
      logger: quiet,
    },
  );
  // The platform's first aggregation creates the connector accounts the single-account commands address.
  const config = configFor('proxy-embedded');
  const first = await runPlatformAggregation({
    tenant: sim.tenant,
    invoke: (type, input) =>
      proxyItems({ url: `${embedded.url}/proxy`, password: PASSWORD, type: type as never, input, config }),
  });
  expect(first.created).toBeGreaterThan(5);
  spcxFile = await buildForSpcx();
  ({ dir: zipDir, files: zipFiles } = packAndExtract());
});

afterAll(async () => {
  await embedded?.close();
  await queued?.close();
  await sim?.close();
  if (redis) {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    await redis.quit();
  }
});

describe('the upload package (npm run pack-zip)', () => {
  it('holds exactly index.js and connector-spec.json', () => {
    expect(zipFiles).toEqual(['connector-spec.json', 'index.js']);
  });
});

describe.each(LEVELS.map((l) => [l ?? 'unset', l] as const))('LOG_LEVEL %s', (_name, level) => {
  // One dev server per level serves the three roles in turn, as a developer's spcx serves every
  // command it is sent (a server per role only started the same process three times).
  let spcx: Spcx | undefined;
  beforeAll(async () => {
    spcx = await startSpcx(spcxFile, level);
  });
  afterAll(async () => {
    await spcx?.close();
  });

  it.each(ROLES)('spcx dev server: the nine commands, %s', async (role) => {
    const results: ExecResult[] = [];
    for (const c of scenario(role)) results.push(await spcxInvoke(spcx!, c.type, c.input, c.config));
    expectScenario(results, `spcx ${level ?? 'unset'} ${role}`);
    expect(spcx!.log()).not.toContain(PASSWORD);
    expect(spcx!.log()).not.toContain(sim.clientSecret);
  });

  it.each(ROLES)("_exec of the zip's index.js: the nine commands, %s", async (role) => {
    const { results, log } = await execInChild(`${zipDir}/index.js`, scenario(role), { logLevel: level, cwd: zipDir });
    expectScenario(results, `_exec ${level ?? 'unset'} ${role}`);
    // The level is honoured: debug shows the role line, error shows no info line; secrets never.
    if (level === 'debug') expect(log).toMatch(/"msg":"running std:account:list"/);
    if (level === 'error' || level === 'warn') expect(log).not.toMatch(/"level":"info"/);
    if (level === undefined || level === 'info') expect(log).toMatch(/"msg":"std:account:list finished"/);
    expect(log).not.toContain(PASSWORD);
    expect(log).not.toContain(sim.clientSecret);
  });
});
