/**
 * The nine commands end to end: the real proxy client (proxyItems) posting to the real server
 * (startServer) whose runner is the production runner (connector core, real platform client over
 * HTTP) against the simulator. Queue mode runs every command as a BullMQ job on Redis; embedded mode
 * runs them in the server process. The simulator plays the platform's side of the aggregation and
 * of the provisioning plan (std:account:enable), and the test applies the outputs of create,
 * update and disable to the tenant as the platform would.
 */
import type { Redis } from 'ioredis';
import type { CommandType } from '../../src/core/command-types';
import { createLogger } from '../../src/observability/logger';
import { proxyItems, type ProxyItem } from '../../src/proxy-client';
import { createProductionRunner } from '../../src/runtime/production-runner';
import { loadEnv } from '../../src/server/env';
import { startServer, type RunningServer } from '../../src/server/server';
import { startSimulator, type RunningSimulator } from '../../src/simulator';
import { runPlatformAggregation } from '../../src/simulator/platform-aggregation';
import { openRedis, redisUrl, uniquePrefix } from '../support/redis';
import { LOGIN_DEFINITION, tenantConnection } from '../support/tenant-config';

type Mode = 'embedded' | 'queue';
const PASSWORD = 'e2e-commands-password-0123456789';

describe.each<Mode>(['embedded', 'queue'])(
  'the nine commands through the proxy server (%s mode) against the simulator',
  (mode) => {
    let sim: RunningSimulator;
    let server: RunningServer;
    let redis: Redis | undefined;
    let config: Record<string, unknown>;
    const prefix = `${uniquePrefix(`e2e-cmd-${mode}`)}:`;

    beforeAll(async () => {
      sim = await startSimulator({
        seed: 11,
        tenant: { identities: 30, accountsPerSource: 20, machineRate: 0.05 },
        rateLimit: false,
        logRequests: false,
      });
      redis = mode === 'queue' ? openRedis() : undefined;
      const runner = createProductionRunner({ ...(redis ? { redis, keyPrefix: prefix } : {}) });
      const env = loadEnv({
        PORT: '0',
        HOST: '127.0.0.1',
        PROXY_PASSWORD: PASSWORD,
        PROXY_PATH: '/proxy',
        QUEUE_NAME: uniquePrefix('e2e-cmd-q'),
        SHUTDOWN_GRACE_MS: '2000',
        METRICS_ENABLED: 'false',
        ...(mode === 'queue' ? { REDIS_URL: redisUrl(), JOB_ENCRYPTION_KEY: 'b'.repeat(64) } : {}),
      });
      server = await startServer(env, {
        runner,
        logger: createLogger({ level: 'error', destination: { write: () => undefined } }),
      });
      config = {
        proxyEnabled: true,
        proxyUrl: `${server.url}/proxy`,
        proxyPassword: PASSWORD,
        ...tenantConnection(sim),
        requestsPerSecond: 1000,
        maxConcurrentRequests: 20,
        attributeMaps: [{ newAttribute: 'departments', existingAttributes: ['department'], attributeMerge: 'list' }],
        attributeDefinitions: [
          LOGIN_DEFINITION,
          { name: 'employeeId', expression: 'F$counter', type: 'counter', digits: 6 },
          { name: 'title', expression: 'Member of $department' },
        ],
      };
    });

    afterAll(async () => {
      await server?.close();
      await sim?.close();
      if (redis) {
        const keys = await redis.keys(`${prefix}*`);
        if (keys.length) await redis.del(...keys);
        await redis.quit();
      }
    });

    async function call(type: CommandType, input: Record<string, unknown> = {}): Promise<ProxyItem[]> {
      const out: ProxyItem[] = [];
      for await (const item of proxyItems({ url: `${server.url}/proxy`, password: PASSWORD, type, input, config }))
        out.push(item);
      return out;
    }
    const invoke = (type: string, input: Record<string, unknown>) =>
      proxyItems({ url: `${server.url}/proxy`, password: PASSWORD, type: type as CommandType, input, config });
    const own = () => sim.tenant.meta.fusionSourceId!;
    const connectorAccounts = () => [...sim.tenant.accountsOfSource(own()).values()];
    const attrs = (item: ProxyItem | undefined) => (item?.attributes ?? {}) as Record<string, unknown>;

    test('test connection, aggregation + enable (twice), read, disable, create, update, discover-schema, entitlement list', async () => {
      if (mode === 'queue') expect(server.dispatcher).toBeDefined();

      // std:test-connection
      const [status] = await call('std:test-connection');
      expect(status).toMatchObject({ status: 'success', disabledSources: ['Legacy'] });

      // std:account:list with the platform's ingestion, then std:account:enable from the provisioning plan.
      const first = await runPlatformAggregation({ tenant: sim.tenant, invoke });
      expect(first.created).toBeGreaterThan(10);
      expect(first.enabled).toBe(first.created);
      expect(first.enableErrors).toEqual([]);
      expect(connectorAccounts().every((a) => a.disabled === false)).toBe(true);
      const logins = connectorAccounts().map((a) => a.attributes.login);
      expect(new Set(logins).size).toBe(logins.length);
      const again = await runPlatformAggregation({ tenant: sim.tenant, invoke });
      expect(again).toMatchObject({ created: 0, removed: 0 });

      // std:account:read
      const account = connectorAccounts()[0]!;
      const [read] = await call('std:account:read', { identity: account.nativeIdentity });
      expect(read).toMatchObject({ identity: account.nativeIdentity, disabled: false });
      expect(attrs(read).login).toBe(account.attributes.login);

      // std:account:disable (single-account: a constant number of platform calls, no listing)
      sim.control.resetLog();
      const [disabled] = await call('std:account:disable', { key: { simple: { id: account.nativeIdentity } } });
      expect(disabled).toMatchObject({ identity: account.nativeIdentity, disabled: true });
      expect(sim.control.counters().requests).toBeLessThanOrEqual(4);
      sim.tenant.updateAccount(account.id, { disabled: true });
      const [enabled] = await call('std:account:enable', { identity: account.nativeIdentity });
      expect(enabled).toMatchObject({ identity: account.nativeIdentity, disabled: false });
      sim.tenant.updateAccount(account.id, { disabled: false });

      // std:account:create: the counter continues after the aggregation's values and is persisted.
      const issued = connectorAccounts()
        .map((a) => String(a.attributes.employeeId))
        .sort();
      const [created] = await call('std:account:create', {
        attributes: { firstName: 'Zora', lastName: 'Quill', department: 'Research' },
      });
      expect(attrs(created).employeeId).toBe(`F${String(first.created + 1).padStart(6, '0')}`);
      expect(issued).not.toContain(attrs(created).employeeId);
      expect(sim.tenant.source(own()).connectorAttributes.fusionCounters).toMatchObject({
        employeeId: first.created + 1,
      });
      const now = sim.tenant.now();
      sim.tenant.addAccount({
        id: sim.tenant.newId(),
        sourceId: own(),
        nativeIdentity: String(created!.identity),
        name: String(attrs(created).name),
        disabled: false,
        locked: false,
        isMachine: false,
        manuallyCorrelated: false,
        attributes: attrs(created),
        created: now,
        modified: now,
      });

      // std:account:update: a normal definition can be set (and later aggregations keep it); others are refused.
      const [updated] = await call('std:account:update', {
        identity: account.nativeIdentity,
        changes: [{ op: 'Set', attribute: 'title', value: 'Chief' }],
      });
      expect(attrs(updated).title).toBe('Chief');
      sim.tenant.updateAccount(account.id, { attributes: attrs(updated) });
      await expect(
        call('std:account:update', {
          identity: account.nativeIdentity,
          changes: [{ op: 'Set', attribute: 'login', value: 'taken' }],
        }),
      ).rejects.toThrow(/Cannot change attribute "login".*generated unique value/);

      // The next aggregation keeps the update and completes the created account's unique value.
      const third = await runPlatformAggregation({ tenant: sim.tenant, invoke });
      expect(third).toMatchObject({ created: 0, removed: 0 });
      expect(sim.tenant.account(account.id)?.attributes.title).toBe('Chief');
      const zora = connectorAccounts().find((a) => a.nativeIdentity === created!.identity)!;
      expect(zora.attributes.login).toMatch(/^zquill\d*$/);
      const all = connectorAccounts().map((a) => a.attributes.login);
      expect(new Set(all).size).toBe(all.length);

      // std:account:discover-schema
      const [schema] = await call('std:account:discover-schema');
      const fields = schema!.attributes as { name: string; multi: boolean; entitlement: boolean }[];
      expect(schema).toMatchObject({ identityAttribute: 'id', displayAttribute: 'name' });
      expect(fields.map((f) => f.name)).toEqual(
        expect.arrayContaining(['id', 'name', 'accounts', 'login', 'employeeId', 'title', 'departments']),
      );
      expect(fields.find((f) => f.name === 'departments')).toMatchObject({ multi: true, entitlement: true });

      // std:entitlement:list: the distinct values of the list-merged attribute on the connector's accounts.
      const entitlements = await call('std:entitlement:list', { type: 'group' });
      const expected = new Set(
        connectorAccounts().flatMap((a) => (a.attributes.departments as string[] | undefined) ?? []),
      );
      expect(expected.size).toBeGreaterThan(1);
      expect(new Set(entitlements.map((e) => e.identity))).toEqual(expected);
    });

    test('two aggregations at once never overlap (run lock shared by the workers): the second waits for the first, or is refused once the wait is over', async () => {
      const results = await Promise.allSettled([call('std:account:list'), call('std:account:list')]);
      const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      // The second waits up to 10 s for the first's lock: a short first run lets it through.
      expect(refused.length).toBeLessThanOrEqual(1);
      for (const r of refused)
        expect(String(r.reason)).toMatch(/Another aggregation of source "Identity Fusion" is in progress/);
      const done = results.filter((r): r is PromiseFulfilledResult<ProxyItem[]> => r.status === 'fulfilled');
      expect(done.length).toBeGreaterThanOrEqual(1);
      for (const d of done) expect(d.value).toHaveLength(connectorAccounts().length);
      expect(sim.tenant.source(own()).connectorAttributes.processing ?? null).toBeNull();
    });
  },
);
