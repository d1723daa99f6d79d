/**
 * #14 item 6: `helm test` runs a pod that sends test connection to the deployed api. The pod's
 * command, as rendered, is run here against a real queue-mode deployment (its own api and worker
 * process, the shared Redis, the simulator): it passes when the api, the queue and a worker answer,
 * and fails on a wrong password; with a configuration Secret it runs the platform's test connection.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { run as check } from '../../src/cli/check';
import { startSimulator, type RunningSimulator } from '../../src/simulator';
import { freePort } from '../support/free-port';
import { redisUrl, uniquePrefix } from '../support/redis';
import { Proc, runCli } from '../support/serve-process';
import { type K8sObject, at, find, render } from './support/helm';
import { scaled } from '../support/time-factor';

jest.setTimeout(scaled(120_000));

const PASSWORD = 'helm-test-proxy-password-1a2b3c4d';
const POD = 'fp-fusion-proxy-test-connection';

interface PodContainer {
  args: string[];
  env: Array<{ name: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }>;
  volumeMounts?: Array<{ mountPath: string }>;
}
const containerOf = (pod: K8sObject): PodContainer => at<PodContainer[]>(pod, 'spec', 'containers')[0]!;

describe('helm test hook: test connection against the deployed api', () => {
  let server: Proc;
  let sim: RunningSimulator;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'fusion-helm-test-'));
    sim = await startSimulator({ seed: 3, tenant: { identities: 20, accountsPerSource: 10 }, rateLimit: false });
    server = new Proc('api+worker', 'all', await freePort(), {
      REDIS_URL: redisUrl(),
      QUEUE_NAME: uniquePrefix('q'),
      PROXY_PASSWORD: PASSWORD,
    });
    await server.start();
  });
  afterAll(async () => {
    await server?.kill('SIGTERM');
    await sim?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The rendered pod's args with the Service URL pointed at the local server (no cluster DNS here). */
  const localArgs = (pod: K8sObject): string[] => {
    const args = containerOf(pod).args;
    const i = args.indexOf('--url');
    const url = new URL(args[i + 1]!);
    expect(url.host).toBe('fp-fusion-proxy-api.fusion.svc:8080');
    return args.map((a, j) => (j === i + 1 ? `${server.url}${url.pathname}` : a));
  };

  it('renders a helm.sh/hook: test pod that reads the proxy password from the Secret and calls the api Service', () => {
    const pod = find(render({ valuesFiles: ['defaults-values.yaml'] }).objects, 'Pod', POD);
    expect(pod.metadata.annotations?.['helm.sh/hook']).toBe('test');
    expect(containerOf(pod).args.slice(0, 1)).toEqual(['check']);
    expect(containerOf(pod).env).toEqual([
      { name: 'PROXY_PASSWORD', valueFrom: { secretKeyRef: { name: 'fp-fusion-proxy', key: 'proxy-password' } } },
    ]);
    expect(at(pod, 'spec', 'securityContext', 'runAsNonRoot')).toBe(true);
    expect(
      render({ valuesFiles: ['defaults-values.yaml'], set: { 'tests.connection.enabled': false } }).objects.filter(
        (o) => o.kind === 'Pod',
      ),
    ).toEqual([]);
  });

  it('without platform credentials: passes when api, queue and a worker answer; fails on a wrong password', async () => {
    const args = localArgs(find(render({ valuesFiles: ['defaults-values.yaml'] }).objects, 'Pod', POD));
    const ok = await runCli(args, { PROXY_PASSWORD: PASSWORD });
    expect(ok.stderr).toBe('');
    expect(ok.stdout).toMatch(/ok: the api accepted the password .* a worker ran it/);
    expect(ok.code).toBe(0);
    const wrong = await runCli(args, { PROXY_PASSWORD: 'not-the-password-0000' });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/PROXY_UNAUTHORIZED/);
    expect(wrong.stderr).not.toContain('not-the-password-0000');
  });

  it('with tests.connection.configSecret: the platform test connection in full', async () => {
    const pod = find(
      render({ valuesFiles: ['defaults-values.yaml'], set: { 'tests.connection.configSecret': 'fusion-test-config' } })
        .objects,
      'Pod',
      POD,
    );
    expect(at(pod, 'spec', 'volumes', 0, 'secret')).toEqual({
      secretName: 'fusion-test-config',
      items: [{ key: 'config.json', path: 'config.json' }],
    });
    const args = localArgs(pod);
    const i = args.indexOf('--config');
    expect(path.dirname(args[i + 1]!)).toBe(containerOf(pod).volumeMounts?.[0]?.mountPath);
    const file = path.join(dir, 'config.json');
    writeFileSync(
      file,
      JSON.stringify({
        baseurl: sim.baseurl,
        clientId: sim.clientId,
        clientSecret: sim.clientSecret,
        spConnectorInstanceId: sim.tenant.source(sim.tenant.meta.fusionSourceId!).connectorAttributes
          .spConnectorInstanceId,
        sources: ['Contractors', 'LDAP', 'Legacy'],
      }),
    );
    const res = await runCli(
      args.map((a, j) => (j === i + 1 ? file : a)),
      { PROXY_PASSWORD: PASSWORD },
    );
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout.trim())).toHaveProperty('status');
  });

  it('`fusion-proxy check` itself: usage errors exit 2, an unreachable api exits 1, never echoing the password', async () => {
    const io = (): { stdout: Writable; stderr: Writable; env: Record<string, string>; out: () => string } => {
      let text = '';
      const sink = new Writable({
        write(chunk: Buffer, _enc, cb) {
          text += chunk.toString();
          cb();
        },
      });
      return { stdout: sink, stderr: sink, env: { PROXY_PASSWORD: PASSWORD }, out: () => text };
    };
    const a = io();
    expect(await check([], a)).toBe(2);
    expect(a.out()).toMatch(/--url and env PROXY_PASSWORD are required/);
    const b = io();
    expect(await check(['--bogus'], b)).toBe(2);
    const c = io();
    expect(await check(['--url', `${server.url}/`], c)).toBe(0);
    expect(c.out()).toMatch(/ok: the api accepted the password/);
    const d = io();
    expect(await check(['--url', `http://127.0.0.1:${await freePort()}/`], d)).toBe(1);
    expect(d.out()).toMatch(/PROXY_CONNECTION_FAILED/);
    expect(d.out()).not.toContain(PASSWORD);
  });
});
