import { readdirSync } from 'node:fs';
import { loadEnv, ENV_SCHEMA } from '../../src/server/env';
import { separateMetricsPort } from '../../src/server/metrics-server';
import {
  CI_VALUES_DIR,
  type K8sObject,
  type Rendered,
  at,
  containerOf,
  find,
  ofKind,
  render,
  renderFailure,
} from './support/helm';

/**
 * The chart and the server agree on the environment: every variable a rendered pod gets is one
 * src/server/env.ts reads, and the whole environment passes loadEnv() for the pod's role.
 */
const SCENARIOS = readdirSync(CI_VALUES_DIR)
  .filter((f) => f.endsWith('-values.yaml'))
  .sort();
const FULL = 'fp-fusion-proxy';
/**
 * Read by Node itself or by the image's start script (bin/heap-limit.sh), not by the server: an
 * operator may pass them through extraEnvVars.
 */
const NODE_RUNTIME = new Set([
  'NODE_EXTRA_CA_CERTS',
  'NODE_OPTIONS',
  'NODE_HEAP_PERCENT',
  'HTTPS_PROXY',
  'HTTP_PROXY',
  'NO_PROXY',
]);

// Stand-ins for Secrets the operator manages (existingSecret): valid values of each variable.
const EXTERNAL: Record<string, string> = {
  PROXY_PASSWORD: 'operator-managed-password-0123456789',
  JOB_ENCRYPTION_KEY: 'a'.repeat(64),
  REDIS_PASSWORD: 'operator-managed-redis-password',
};

function podEnv(r: Rendered, dep: K8sObject): Record<string, string> {
  const secrets = new Map(
    ofKind(r.objects, 'Secret').map((s) => [s.metadata.name, at<Record<string, string>>(s, 'data')]),
  );
  const env: Record<string, string> = {};
  for (const e of containerOf(dep).env ?? []) {
    const ref = e.valueFrom?.secretKeyRef;
    // The downward API (POD_NAME, POD_NAMESPACE): what the kubelet fills in.
    if (e.valueFrom?.fieldRef) env[e.name] = `kubelet-${e.valueFrom.fieldRef.fieldPath}`;
    else if (ref) {
      const data = secrets.get(ref.name);
      env[e.name] = data ? Buffer.from(data[ref.key] ?? '', 'base64').toString('utf8') : (EXTERNAL[e.name] ?? 'x');
    } else {
      env[e.name] = e.value ?? '';
    }
  }
  return env;
}

describe('chart environment vs src/server/env.ts', () => {
  it.each(SCENARIOS)('%s: every variable is read by the server, and loadEnv() accepts the pod environment', (s) => {
    const r = render({ valuesFiles: [s] });
    for (const role of ['api', 'worker'] as const) {
      const dep = find(r.objects, 'Deployment', `${FULL}-${role}`);
      const env = podEnv(r, dep);
      expect(Object.keys(env).filter((k) => !(k in ENV_SCHEMA) && !NODE_RUNTIME.has(k))).toEqual([]);
      const parsed = loadEnv(env);
      expect(parsed.ROLE).toBe(role);
      expect(parsed.REDIS_URL).toBeTruthy();
      // The probes and the Service target the port the server listens on.
      expect(parsed.PORT).toBe(containerOf(dep).ports?.find((p) => p.name === 'http')?.containerPort);
      // The ServiceMonitor scrapes the port that alone serves /metrics (so not the http port).
      expect(parsed.METRICS_PORT).toBe(containerOf(dep).ports?.find((p) => p.name === 'metrics')?.containerPort);
      expect(parsed.METRICS_ENABLED).toBe(true);
      expect(separateMetricsPort(parsed)).toBe(parsed.METRICS_PORT);
      // The kubelet probes the pod IP: the server must listen on every interface.
      expect(parsed.HOST).toBe('0.0.0.0');
      // Same queue on both sides, or workers never see the api's jobs.
      expect(parsed.QUEUE_NAME).toBe(loadEnv(podEnv(r, find(r.objects, 'Deployment', `${FULL}-api`))).QUEUE_NAME);
      if (role === 'api') expect(parsed.PROXY_PASSWORD).toBeTruthy();
      // Matching threads each hold a copy of the baseline: the chart bounds them (values: 2).
      if (role === 'worker') expect(parsed.MATCHING_THREADS).toBeGreaterThanOrEqual(1);
    }
  });

  it('config.matchingPartitions: MATCHING_PARTITIONS of the worker, true by default, false when off; a string is refused', () => {
    const workerEnv = (set: Record<string, string | number | boolean>): Record<string, string> => {
      const r = render({ valuesFiles: ['defaults-values.yaml'], set });
      return podEnv(r, find(r.objects, 'Deployment', `${FULL}-worker`));
    };
    const byDefault = workerEnv({});
    expect(byDefault.MATCHING_PARTITIONS).toBe('true');
    expect(loadEnv({ ...byDefault, ROLE: 'worker' }).MATCHING_PARTITIONS).toBe(true);
    const off = workerEnv({ 'config.matchingPartitions': false });
    expect(off.MATCHING_PARTITIONS).toBe('false');
    expect(loadEnv({ ...off, ROLE: 'worker' }).MATCHING_PARTITIONS).toBe(false);
    expect(
      renderFailure({ valuesFiles: ['defaults-values.yaml'], set: { 'config.matchingPartitions': 'yes' } }),
    ).toMatch(/matchingPartitions/);
  });

  it('config.matchingThreads: MATCHING_THREADS of the worker; null leaves it to the worker (every core); 0 is refused', () => {
    const workerEnv = (set: Record<string, string | number>): Record<string, string> => {
      const r = render({ valuesFiles: ['defaults-values.yaml'], set });
      return podEnv(r, find(r.objects, 'Deployment', `${FULL}-worker`));
    };
    expect(workerEnv({ 'config.matchingThreads': 4 }).MATCHING_THREADS).toBe('4');
    expect(workerEnv({ 'config.matchingThreads': 'null' })).not.toHaveProperty('MATCHING_THREADS');
    expect(renderFailure({ valuesFiles: ['defaults-values.yaml'], set: { 'config.matchingThreads': 0 } })).toMatch(
      /matchingThreads/,
    );
  });

  it('config.matchingShardJobs: MATCHING_SHARD_JOBS of the worker; null (default) leaves it unset; 0 turns child jobs off; -1 is refused', () => {
    const workerEnv = (set: Record<string, string | number>): Record<string, string> => {
      const r = render({ valuesFiles: ['defaults-values.yaml'], set });
      return podEnv(r, find(r.objects, 'Deployment', `${FULL}-worker`));
    };
    expect(workerEnv({})).not.toHaveProperty('MATCHING_SHARD_JOBS');
    expect(workerEnv({ 'config.matchingShardJobs': 4 }).MATCHING_SHARD_JOBS).toBe('4');
    expect(loadEnv({ ...workerEnv({ 'config.matchingShardJobs': 0 }), ROLE: 'worker' }).MATCHING_SHARD_JOBS).toBe(0);
    expect(renderFailure({ valuesFiles: ['defaults-values.yaml'], set: { 'config.matchingShardJobs': -1 } })).toMatch(
      /matchingShardJobs/,
    );
  });

  it('the check above can fail: a variable the server does not know, or a value it rejects', () => {
    const r = render({ valuesFiles: ['defaults-values.yaml'], set: { 'config.logLevel': 'debug' } });
    const env = podEnv(r, find(r.objects, 'Deployment', `${FULL}-api`));
    expect(() => loadEnv({ ...env, ROLE: 'both' })).toThrow(/ROLE must be one of/);
    expect(() => loadEnv({ ...env, PROXY_PASSWORD: '' })).toThrow(/PROXY_PASSWORD is required/);
  });
});
