import type { CommandContext } from '../../src/core/command-runner';
import { createTestConnectionCommand } from '../../src/core/commands/test-connection';
import { silentLogger } from '../../src/core/ports/logger';
import { createPlatformFactory } from '../../src/platform/create-platform-client';
import { caught, collect, startSim, type RunningSimulator } from './support';

function ctx(): CommandContext {
  return { signal: new AbortController().signal, logger: silentLogger, jobId: 'job-1', progress: () => undefined };
}

describe('std:test-connection', () => {
  let sim: RunningSimulator;
  const command = createTestConnectionCommand(createPlatformFactory({ keyPrefix: 'test-connection:' }));
  const config = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
    baseurl: sim.baseurl,
    clientId: sim.clientId,
    clientSecret: sim.clientSecret,
    spConnectorInstanceId: sim.tenant.source(sim.tenant.meta.fusionSourceId!).connectorAttributes.spConnectorInstanceId,
    requestsPerSecond: 100,
    ...extra,
  });

  beforeAll(async () => {
    sim = await startSim({ rateLimit: false });
  });
  afterAll(async () => {
    await sim.close();
  });
  beforeEach(() => sim.control.resetLog());

  it('answers one object with status success after GET /v3/sources', async () => {
    const out = await collect(command({}, config({ sources: ['HR', 'LDAP'] }), ctx()));
    expect(out).toHaveLength(1);
    expect(out[0]).toMatchObject({
      status: 'success',
      connectorSource: sim.tenant.meta.fusionSourceName,
      disabledSources: [],
      warnings: [],
      configuredSources: ['HR', 'LDAP'],
    });
    const calls = sim.control.requestLog().map((e) => `${e.method} ${e.template}`);
    expect(calls).toContain('GET /v3/sources');
  });

  it('fails for a source name that matches only in another case, listing the names that exist', async () => {
    const err = await caught(collect(command({}, config({ sources: ['hr', 'LDAP'] }), ctx())));
    expect(err.code).toBe('SOURCE_NOT_FOUND');
    expect(err.message).toContain('not found on the platform: "hr"');
    expect(err.message).toContain('including case');
    expect(err.message).toMatch(/Sources that exist: .*"HR"/);
  });

  it('reports a disabled managed source as a warning', async () => {
    const [out] = await collect(command({}, config({ sources: ['HR', 'Legacy'] }), ctx()));
    expect(out).toMatchObject({ status: 'success', disabledSources: ['Legacy'] });
    expect((out.warnings as string[])[0]).toContain('"Legacy" is disabled');
  });

  it('reports wrong credentials as PLATFORM_UNAUTHORIZED', async () => {
    const err = await caught(collect(command({}, config({ clientSecret: 'nope-nope', sources: ['HR'] }), ctx())));
    expect(err.code).toBe('PLATFORM_UNAUTHORIZED');
    expect(err.message).not.toContain('nope-nope');
  });

  it('validates the whole configuration, not only the API settings: a config every aggregation would reject never gets a green test', async () => {
    sim.control.resetLog();
    const err = await caught(collect(command({}, config({ sources: ['HR'], maxAttempts: -1 }), ctx())));
    expect(err.code).toBe('CONFIG_INVALID');
    expect(err.message).toContain('maxAttempts');
    expect(sim.control.requestLog()).toHaveLength(0);
  });

  it('rejects an invalid setting before any request', async () => {
    const err = await caught(collect(command({}, config({ requestsPerSecond: 'fast' }), ctx())));
    expect(err.code).toBe('CONFIG_INVALID');
    expect(err.message).toContain('requestsPerSecond');
    expect(sim.control.counters().requests).toBe(0);
  });

  it('without spConnectorInstanceId: fails before any request, naming the setting (every other command needs it)', async () => {
    const err = await caught(
      collect(command({}, config({ sources: ['HR'], spConnectorInstanceId: undefined }), ctx())),
    );
    expect(err.code).toBe('CONFIG_INVALID');
    expect(err.message).toMatch(
      /spConnectorInstanceId = "": allowed the connector instance id the platform sets on the source/,
    );
    expect(sim.control.counters().requests).toBe(0);
  });

  it('with a spConnectorInstanceId no source has: SOURCE_NOT_FOUND naming it, not "success"', async () => {
    const err = await caught(
      collect(command({}, config({ sources: ['HR'], spConnectorInstanceId: 'not-this-instance' }), ctx())),
    );
    expect(err.code).toBe('SOURCE_NOT_FOUND');
    expect(err.message).toMatch(/No source on the platform has connector instance id not-this-instance/);
  });
});
