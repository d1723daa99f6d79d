import { readdirSync } from 'node:fs';
import { activeListKey, laneQueueName, shardQueueName, waitListKey } from '../../src/queue/queue-names';
import { checkCustomResource } from './support/crd-checks';
import {
  CI_VALUES_DIR,
  type K8sObject,
  type Rendered,
  at,
  containerOf,
  envOf,
  find,
  ofKind,
  render,
} from './support/helm';
import { validateAgainstSchemas } from './support/k8s-schemas';

const SCENARIOS = readdirSync(CI_VALUES_DIR)
  .filter((f) => f.endsWith('-values.yaml'))
  .sort();
const renders = new Map<string, Rendered>();
function rendered(file: string): Rendered {
  let r = renders.get(file);
  if (!r) {
    r = render({ valuesFiles: [file] });
    renders.set(file, r);
  }
  return r;
}

const FULL = 'fp-fusion-proxy';
const API = `${FULL}-api`;
const WORKER = `${FULL}-worker`;
const deployments = (r: Rendered): K8sObject[] => [
  find(r.objects, 'Deployment', API),
  find(r.objects, 'Deployment', WORKER),
];

describe('chart renders every ci/ scenario into valid Kubernetes objects', () => {
  it('has the scenarios the issue asks for', () => {
    for (const s of [
      'defaults',
      'existing-secret',
      'keda',
      'ingress-tls',
      'external-redis',
      'bundled-redis',
      'httproute',
      'monitoring',
      'scheduling',
    ]) {
      expect(SCENARIOS).toContain(`${s}-values.yaml`);
    }
  });

  it('validates every object against the Kubernetes / Prometheus Operator schemas, or structurally for KEDA and Gateway API', () => {
    const all: Array<{ scenario: string; obj: K8sObject }> = [];
    for (const s of SCENARIOS) for (const obj of rendered(s).objects) all.push({ scenario: s, obj });
    const results = validateAgainstSchemas(all.map((a) => a.obj));
    const problems: string[] = [];
    const kinds = new Set<string>();
    for (const r of results) {
      const { scenario, obj } = all[r.index]!;
      kinds.add(obj.kind);
      if (!obj.metadata?.name) problems.push(`${scenario}: ${obj.kind} without metadata.name`);
      if (r.status === 'invalid') problems.push(`${scenario}: ${r.kind}/${r.name}: ${r.message}`);
      if (r.status === 'unknown') {
        const custom = checkCustomResource(obj);
        if (!custom) problems.push(`${scenario}: ${r.message} and no structural check`);
        else problems.push(...custom.map((p) => `${scenario}: ${p}`));
      }
    }
    expect(problems).toEqual([]);
    for (const k of [
      'Deployment',
      'Service',
      'Secret',
      'Ingress',
      'HTTPRoute',
      'ScaledObject',
      'TriggerAuthentication',
      'HorizontalPodAutoscaler',
      'PodDisruptionBudget',
      'NetworkPolicy',
      'ServiceAccount',
      'Role',
      'RoleBinding',
      'ServiceMonitor',
      'PrometheusRule',
      'ConfigMap',
    ]) {
      expect(kinds).toContain(k);
    }
  });

  it('the validator itself catches a broken object (so the test above can fail)', () => {
    const dep = structuredClone(find(rendered('defaults-values.yaml').objects, 'Deployment', API)) as K8sObject;
    containerOf(dep).ports![0]!.containerPort = '8080' as unknown as number;
    const [res] = validateAgainstSchemas([dep]);
    expect(res?.status).toBe('invalid');
    expect(res?.message).toMatch(/containerPort must be integer/);
    const so = structuredClone(find(rendered('keda-values.yaml').objects, 'ScaledObject', WORKER)) as K8sObject;
    at<Array<{ metadata: Record<string, unknown> }>>(so, 'spec', 'triggers')[0]!.metadata.listLength = 5;
    expect(checkCustomResource(so)).toEqual([
      `ScaledObject/${WORKER}: triggers[0].metadata.listLength must be a string`,
    ]);
  });

  it('labels every object with the standard app.kubernetes.io labels', () => {
    for (const s of SCENARIOS) {
      // extraDeploy objects are the operator's own.
      for (const o of rendered(s).objects.filter((x) => x.metadata.name !== 'fp-extra')) {
        expect(o.metadata.labels?.['app.kubernetes.io/name']).toBe('fusion-proxy');
        expect(o.metadata.labels?.['app.kubernetes.io/instance']).toBe('fp');
        expect(o.metadata.labels?.['app.kubernetes.io/managed-by']).toBe('Helm');
      }
    }
  });
});

describe('api and worker Deployments', () => {
  it.each(SCENARIOS)(
    '%s: one image, ROLE per component, probes on the http port, /metrics on the metrics port',
    (s) => {
      const r = rendered(s);
      for (const [dep, role] of deployments(r).map((d, i) => [d, i === 0 ? 'api' : 'worker'] as const)) {
        const c = containerOf(dep);
        expect(at(dep, 'spec', 'template', 'metadata', 'labels', 'app.kubernetes.io/component')).toBe(role);
        expect(envOf(dep, 'ROLE')?.value).toBe(role);
        expect(c.ports).toEqual([
          { name: 'http', containerPort: 8080, protocol: 'TCP' },
          { name: 'metrics', containerPort: 9090, protocol: 'TCP' },
        ]);
        expect(envOf(dep, 'PORT')?.value).toBe('8080');
        expect(envOf(dep, 'METRICS_PORT')?.value).toBe('9090');
        expect(c.startupProbe?.httpGet).toEqual({ path: '/healthz', port: 'http' });
        expect(c.livenessProbe?.httpGet).toEqual({ path: '/healthz', port: 'http' });
        expect(c.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'http' });
      }
      expect(containerOf(deployments(r)[0]!).image).toBe(containerOf(deployments(r)[1]!).image);
    },
  );

  it.each(SCENARIOS)('%s: hardened security context with a numeric non-root user, resources set', (s) => {
    for (const dep of deployments(rendered(s))) {
      const pod = at<Record<string, unknown>>(dep, 'spec', 'template', 'spec', 'securityContext');
      const c = containerOf(dep);
      const sc = c.securityContext!;
      for (const ctx of [pod, sc]) {
        expect(ctx.runAsNonRoot).toBe(true);
        expect(Number.isInteger(ctx.runAsUser) && (ctx.runAsUser as number) > 0).toBe(true);
        expect(ctx.seccompProfile).toEqual({ type: 'RuntimeDefault' });
      }
      expect(sc.readOnlyRootFilesystem).toBe(true);
      expect(sc.allowPrivilegeEscalation).toBe(false);
      expect(sc.capabilities).toEqual({ drop: ['ALL'] });
      expect(c.resources?.requests?.cpu).toBeTruthy();
      expect(c.resources?.requests?.memory).toBeTruthy();
      expect(c.resources?.limits?.memory).toBeTruthy();
      // Only a worker keeping its pod deletion cost (it scales) carries a token.
      const token = envOf(dep, 'POD_DELETION_COST')?.value === 'true';
      expect(at(dep, 'spec', 'template', 'spec', 'automountServiceAccountToken')).toBe(token);
      expect(at(dep, 'spec', 'template', 'spec', 'serviceAccountName')).toBe(FULL);
      expect(at(dep, 'spec', 'template', 'spec', 'topologySpreadConstraints')).toHaveLength(1);
    }
  });

  it.each(SCENARIOS)('%s: secrets reach the pods only through secretKeyRef, never inline', (s) => {
    const r = rendered(s);
    const secrets = new Map(
      ofKind(r.objects, 'Secret').map((o) => [o.metadata.name, at<Record<string, string>>(o, 'data')]),
    );
    // `redis-tls: enable` is a switch for KEDA, not a secret.
    const inlineSecrets = [...secrets.values()].flatMap((d) =>
      Object.entries(d)
        .filter(([k]) => k !== 'redis-tls')
        .map(([, v]) => Buffer.from(v, 'base64').toString('utf8')),
    );
    if (!s.startsWith('existing-secret') && !s.startsWith('keda-existing'))
      expect(inlineSecrets).toContain('ci-proxy-password-0123456789');
    for (const dep of deployments(r)) {
      const text = JSON.stringify(dep);
      for (const secret of inlineSecrets) expect(text).not.toContain(secret);
      for (const name of ['PROXY_PASSWORD', 'JOB_ENCRYPTION_KEY', 'REDIS_PASSWORD']) {
        const env = envOf(dep, name);
        if (!env) continue;
        expect(env.value).toBeUndefined();
        const ref = env.valueFrom?.secretKeyRef;
        expect(ref).toBeDefined();
        // A chart-managed secret must hold the key; an existing one is the operator's.
        if (secrets.has(ref!.name)) expect(Object.keys(secrets.get(ref!.name)!)).toContain(ref!.key);
      }
      // The URL carries no credentials: they come apart, from the Secret.
      expect(new URL(envOf(dep, 'REDIS_URL')!.value!).password).toBe('');
    }
    const api = deployments(r)[0]!;
    expect(envOf(api, 'PROXY_PASSWORD')?.valueFrom?.secretKeyRef).toBeDefined();
    expect(envOf(api, 'REDIS_URL')).toBeDefined();
  });

  it('workers get the password only when they must derive the job key from it', () => {
    const withKey = find(rendered('keda-values.yaml').objects, 'Deployment', WORKER);
    expect(envOf(withKey, 'PROXY_PASSWORD')).toBeUndefined();
    expect(envOf(withKey, 'JOB_ENCRYPTION_KEY')?.valueFrom?.secretKeyRef).toEqual({
      name: FULL,
      key: 'job-encryption-key',
    });
    const derived = find(rendered('defaults-values.yaml').objects, 'Deployment', WORKER);
    expect(envOf(derived, 'JOB_ENCRYPTION_KEY')).toBeUndefined();
    expect(envOf(derived, 'PROXY_PASSWORD')?.valueFrom?.secretKeyRef).toEqual({ name: FULL, key: 'proxy-password' });
  });

  it('existingSecret: no chart Secret for auth, refs use the configured names and keys; the job key is optional', () => {
    const r = rendered('existing-secret-values.yaml');
    expect(ofKind(r.objects, 'Secret')).toEqual([]);
    const [api, worker] = deployments(r);
    expect(envOf(api!, 'PROXY_PASSWORD')?.valueFrom?.secretKeyRef).toEqual({
      name: 'fusion-proxy-auth',
      key: 'password',
    });
    // Documented as optional: a Secret without the key starts (the key is derived from the password),
    // so workers keep the password too.
    expect(envOf(worker!, 'JOB_ENCRYPTION_KEY')?.valueFrom?.secretKeyRef).toEqual({
      name: 'fusion-proxy-auth',
      key: 'job-key',
      optional: true,
    });
    expect(envOf(worker!, 'PROXY_PASSWORD')?.valueFrom?.secretKeyRef).toEqual({
      name: 'fusion-proxy-auth',
      key: 'password',
    });
    expect(envOf(worker!, 'REDIS_PASSWORD')?.valueFrom?.secretKeyRef).toEqual({
      name: 'fusion-proxy-redis',
      key: 'password',
    });
    expect(envOf(worker!, 'REDIS_URL')?.value).toBe('redis://redis.example.internal:6379/0');
  });

  it('passes the server settings as environment variables', () => {
    const [api, worker] = deployments(rendered('ingress-tls-values.yaml'));
    expect(envOf(api!, 'PROXY_PATH')?.value).toBe('/fusion');
    expect(envOf(api!, 'BODY_LIMIT_BYTES')?.value).toBe('10485760');
    expect(envOf(api!, 'REQUEST_TIMEOUT_MS')?.value).toBe('300000');
    // The worker derives its stream timing from the same timeout.
    expect(envOf(worker!, 'REQUEST_TIMEOUT_MS')?.value).toBe('300000');
    expect(envOf(api!, 'HEARTBEAT_INTERVAL_MS')?.value).toBe('15000');
    expect(envOf(worker!, 'WORKER_CONCURRENCY')?.value).toBe('4');
    expect(envOf(worker!, 'WORKER_QUICK_CONCURRENCY')?.value).toBe('4');
    expect(envOf(worker!, 'QUEUE_NAME')?.value).toBe('fusion-commands');
    // The server stops waiting for work before the kubelet kills it.
    expect(Number(envOf(worker!, 'SHUTDOWN_GRACE_MS')?.value)).toBeLessThan(
      at<number>(worker, 'spec', 'template', 'spec', 'terminationGracePeriodSeconds') * 1000,
    );
  });
});

describe('scheduling and pass-through options', () => {
  it('fills the selector into custom topology spread constraints and passes the rest through', () => {
    const r = rendered('scheduling-values.yaml');
    const [api, worker] = deployments(r);
    expect(at(api, 'spec', 'template', 'spec', 'topologySpreadConstraints')).toEqual([
      {
        maxSkew: 1,
        topologyKey: 'topology.kubernetes.io/zone',
        whenUnsatisfiable: 'DoNotSchedule',
        labelSelector: {
          matchLabels: {
            'app.kubernetes.io/name': 'fusion-proxy',
            'app.kubernetes.io/instance': 'fp',
            'app.kubernetes.io/component': 'api',
          },
        },
      },
    ]);
    expect(at(api, 'spec', 'template', 'spec', 'nodeSelector')).toEqual({ 'kubernetes.io/os': 'linux' });
    expect(at(api, 'spec', 'template', 'spec', 'tolerations', 0, 'key')).toBe('dedicated');
    expect(at(worker, 'spec', 'template', 'spec', 'affinity', 'nodeAffinity')).toBeDefined();
    expect(at(api, 'spec', 'template', 'metadata', 'annotations', 'example.com/scrape')).toBe('false');
    for (const d of [api!, worker!]) {
      expect(containerOf(d).image).toBe(
        'ghcr.io/fusion-proxy/fusion-proxy@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef',
      );
      expect(envOf(d, 'AUTH_MAX_FAILURES')?.value).toBe('20');
      expect(at(d, 'spec', 'template', 'spec', 'containers', 0, 'envFrom')).toEqual([
        { secretRef: { name: 'fusion-proxy-extra' } },
      ]);
      expect(at(d, 'spec', 'template', 'spec', 'imagePullSecrets')).toEqual([{ name: 'registry-credentials' }]);
      expect(d.metadata.labels?.team).toBe('identity');
      expect(d.metadata.annotations?.owner).toBe('identity-team');
    }
    expect(envOf(worker!, 'AUTH_FAILURE_WINDOW_MS')?.value).toBe('120000');
    expect(envOf(api!, 'AUTH_FAILURE_WINDOW_MS')).toBeUndefined();
    expect(at(find(r.objects, 'PodDisruptionBudget', API), 'spec', 'minAvailable')).toBe(1);
    expect(
      at(
        find(r.objects, 'HorizontalPodAutoscaler', WORKER),
        'spec',
        'behavior',
        'scaleDown',
        'stabilizationWindowSeconds',
      ),
    ).toBe(600);
    expect(find(r.objects, 'ServiceAccount', FULL).metadata.annotations).toEqual({
      'eks.amazonaws.com/role-arn': 'arn:aws:iam::123456789012:role/fusion-proxy',
      owner: 'identity-team',
    });
    expect(at(find(r.objects, 'ConfigMap', 'fp-extra'), 'data', 'note')).toBe('extra object');
  });
});

describe('scaling', () => {
  const hpaTargets = (r: Rendered): string[] =>
    ofKind(r.objects, 'HorizontalPodAutoscaler').map((h) => at<string>(h, 'spec', 'scaleTargetRef', 'name'));

  type Trigger = { type: string; name: string; metadata: Record<string, string>; authenticationRef?: { name: string } };
  const triggersOf = (r: Rendered): Trigger[] =>
    at<Trigger[]>(find(r.objects, 'ScaledObject', WORKER), 'spec', 'triggers');

  it('KEDA counts the jobs waiting AND running, in exactly the BullMQ lists the code uses, summed into one metric', () => {
    for (const s of ['keda-values.yaml', 'keda-existing-secret-values.yaml', 'bundled-redis-values.yaml']) {
      const r = rendered(s);
      const so = find(r.objects, 'ScaledObject', WORKER);
      expect(triggersOf(r).map((t) => [t.type, t.name, t.metadata.listName])).toEqual([
        ['redis', 'waiting', waitListKey()],
        ['redis', 'active', activeListKey()],
        ['redis', 'shardWaiting', waitListKey(shardQueueName())],
        ['redis', 'shardActive', activeListKey(shardQueueName())],
        ['redis', 'quickWaiting', waitListKey(laneQueueName('quick'))],
        ['redis', 'quickActive', activeListKey(laneQueueName('quick'))],
      ]);
      // One worker runs WORKER_CONCURRENCY jobs: that many jobs (waiting + running) per replica.
      const concurrency = envOf(find(r.objects, 'Deployment', WORKER), 'WORKER_CONCURRENCY')?.value;
      expect(at(so, 'spec', 'advanced', 'scalingModifiers')).toEqual({
        formula: 'waiting + active + shardWaiting + shardActive + quickWaiting + quickActive',
        target: concurrency,
        activationTarget: '0',
        metricType: 'AverageValue',
      });
      for (const t of triggersOf(r)) expect(t.metadata.listLength).toBe(concurrency);
      expect(at(so, 'spec', 'scaleTargetRef', 'name')).toBe(WORKER);
    }
    const custom = render({
      valuesFiles: ['keda-values.yaml'],
      set: {
        'config.queueName': 'other-queue',
        'worker.keda.scalingModifiers': false,
        'worker.keda.jobsPerReplica': 2,
      },
    });
    expect(triggersOf(custom).map((t) => [t.metadata.listName, t.metadata.listLength])).toEqual([
      [waitListKey('other-queue'), '2'],
      [activeListKey('other-queue'), '2'],
      [waitListKey(shardQueueName('other-queue')), '2'],
      [activeListKey(shardQueueName('other-queue')), '2'],
      [waitListKey(laneQueueName('quick', 'other-queue')), '2'],
      [activeListKey(laneQueueName('quick', 'other-queue')), '2'],
    ]);
    expect(at(find(custom.objects, 'ScaledObject', WORKER), 'spec', 'advanced')).toBeUndefined();
    expect(envOf(find(custom.objects, 'Deployment', WORKER), 'QUEUE_NAME')?.value).toBe('other-queue');
  });

  it('workers that scale keep their pod deletion cost: downward API, a token, get/patch pods only; none when nothing scales them', () => {
    for (const s of ['keda-values.yaml', 'keda-existing-secret-values.yaml']) {
      const r = rendered(s);
      const [api, worker] = deployments(r);
      expect(envOf(worker!, 'POD_DELETION_COST')?.value).toBe('true');
      expect(envOf(worker!, 'POD_NAME')?.valueFrom).toEqual({ fieldRef: { fieldPath: 'metadata.name' } });
      expect(envOf(worker!, 'POD_NAMESPACE')?.valueFrom).toEqual({ fieldRef: { fieldPath: 'metadata.namespace' } });
      expect(at(worker, 'spec', 'template', 'spec', 'automountServiceAccountToken')).toBe(true);
      // The api never calls the Kubernetes API: no token, no variable.
      expect(at(api, 'spec', 'template', 'spec', 'automountServiceAccountToken')).toBe(false);
      expect(envOf(api!, 'POD_DELETION_COST')).toBeUndefined();
      expect(at(find(r.objects, 'Role', WORKER), 'rules')).toEqual([
        { apiGroups: [''], resources: ['pods'], verbs: ['get', 'patch'] },
      ]);
      const binding = find(r.objects, 'RoleBinding', WORKER);
      expect(at(binding, 'roleRef')).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: WORKER });
      const account = at<string>(worker, 'spec', 'template', 'spec', 'serviceAccountName');
      expect(at(binding, 'subjects')).toEqual([
        { kind: 'ServiceAccount', name: account, namespace: expect.any(String) },
      ]);
    }
    const hpa = render({ valuesFiles: ['defaults-values.yaml'], set: { 'worker.autoscaling.enabled': true } });
    expect(envOf(find(hpa.objects, 'Deployment', WORKER), 'POD_DELETION_COST')?.value).toBe('true');
    // Fixed replicas: nothing scales the workers in, so nothing to tell Kubernetes and no RBAC.
    const fixed = rendered('defaults-values.yaml');
    expect(envOf(find(fixed.objects, 'Deployment', WORKER), 'POD_DELETION_COST')).toBeUndefined();
    expect(
      at(find(fixed.objects, 'Deployment', WORKER), 'spec', 'template', 'spec', 'automountServiceAccountToken'),
    ).toBe(false);
    expect(ofKind(fixed.objects, 'Role')).toEqual([]);
    const off = render({ valuesFiles: ['keda-values.yaml'], set: { 'worker.podDeletionCost.enabled': false } });
    expect(envOf(find(off.objects, 'Deployment', WORKER), 'POD_DELETION_COST')).toBeUndefined();
    expect(ofKind(off.objects, 'RoleBinding')).toEqual([]);
    // rbac.create=false: the operator binds the account; the worker still keeps its cost.
    const own = render({ valuesFiles: ['keda-values.yaml'], set: { 'rbac.create': false } });
    expect(envOf(find(own.objects, 'Deployment', WORKER), 'POD_DELETION_COST')?.value).toBe('true');
    expect(ofKind(own.objects, 'Role')).toEqual([]);
  });

  it('a worker told to stop (scale-in) finishes running jobs: long grace, SHUTDOWN_GRACE_MS inside it, no preStop delay', () => {
    const worker = find(rendered('keda-values.yaml').objects, 'Deployment', WORKER);
    const grace = at<number>(worker, 'spec', 'template', 'spec', 'terminationGracePeriodSeconds');
    expect(grace).toBe(3600);
    expect(Number(envOf(worker, 'SHUTDOWN_GRACE_MS')?.value)).toBe((grace - 10) * 1000);
    expect(containerOf(worker)).not.toHaveProperty('lifecycle');
    // The default scales to zero only when nothing waits and nothing runs.
    expect(at(find(rendered('keda-values.yaml').objects, 'ScaledObject', WORKER), 'spec', 'minReplicaCount')).toBe(0);
  });

  it('never renders a worker HPA next to the ScaledObject, and drops replicas from scaled Deployments', () => {
    const keda = rendered('keda-values.yaml');
    expect(hpaTargets(keda)).toEqual([API]);
    expect(at(find(keda.objects, 'Deployment', WORKER), 'spec', 'replicas')).toBeUndefined();
    expect(at(find(keda.objects, 'Deployment', API), 'spec', 'replicas')).toBeUndefined();
    const hpa = render({ valuesFiles: ['defaults-values.yaml'], set: { 'worker.autoscaling.enabled': true } });
    expect(hpaTargets(hpa)).toEqual([WORKER]);
    expect(ofKind(hpa.objects, 'ScaledObject')).toEqual([]);
    expect(hpaTargets(rendered('defaults-values.yaml'))).toEqual([]);
    expect(at(find(rendered('defaults-values.yaml').objects, 'Deployment', API), 'spec', 'replicas')).toBe(2);
  });

  it("KEDA gets the Redis address, TLS, database and the very Secret key of the pods' password", () => {
    const r = rendered('keda-values.yaml');
    for (const t of triggersOf(r)) {
      expect(t.metadata).toMatchObject({
        address: 'redis.example.internal:6380',
        enableTLS: 'true',
        databaseIndex: '2',
      });
      expect(t.authenticationRef).toEqual({ name: WORKER });
    }
    const ta = find(r.objects, 'TriggerAuthentication', WORKER);
    const worker = find(r.objects, 'Deployment', WORKER);
    expect(at(ta, 'spec', 'secretTargetRef')).toEqual([{ parameter: 'password', name: FULL, key: 'redis-password' }]);
    expect(envOf(worker, 'REDIS_PASSWORD')?.valueFrom?.secretKeyRef).toEqual({ name: FULL, key: 'redis-password' });
    expect(envOf(worker, 'REDIS_URL')?.value).toBe('rediss://redis.example.internal:6380/2');

    // A password a URL would have to encode is stored as is, once, for the app and for KEDA.
    const acl = render({ valuesFiles: ['external-redis-values.yaml'], set: { 'worker.keda.enabled': true } });
    const secret = at<Record<string, string>>(find(acl.objects, 'Secret', FULL), 'data');
    expect(Buffer.from(secret['redis-password']!, 'base64').toString()).toBe('p@ss:w/rd%40');
    expect(at(find(acl.objects, 'TriggerAuthentication', WORKER), 'spec', 'secretTargetRef')).toEqual([
      { parameter: 'password', name: FULL, key: 'redis-password' },
    ]);
    const aclWorker = find(acl.objects, 'Deployment', WORKER);
    expect(envOf(aclWorker, 'REDIS_USERNAME')?.value).toBe('fusion');
    for (const t of triggersOf(acl)) {
      expect(t.metadata).toMatchObject({ address: '10.0.0.12:6390', usernameFromEnv: 'REDIS_USERNAME' });
      expect(t.metadata).not.toHaveProperty('enableTLS');
    }

    // A private CA: the pods mount it, KEDA gets it (with tls=enable) in its TriggerAuthentication.
    const existing = rendered('keda-existing-secret-values.yaml');
    for (const t of triggersOf(existing)) {
      expect(t.metadata).toMatchObject({ address: 'redis.example.internal:6379', databaseIndex: '3' });
      // KEDA refuses enableTLS next to TLS settings in the TriggerAuthentication.
      expect(t.metadata).not.toHaveProperty('enableTLS');
    }
    expect(at(find(existing.objects, 'TriggerAuthentication', WORKER), 'spec', 'secretTargetRef')).toEqual([
      { parameter: 'password', name: 'fusion-proxy-redis', key: 'redis-password' },
      { parameter: 'tls', name: FULL, key: 'redis-tls' },
      { parameter: 'ca', name: 'redis-ca', key: 'ca.pem' },
    ]);
    const tlsSecret = at<Record<string, string>>(find(existing.objects, 'Secret', FULL), 'data');
    expect(Object.keys(tlsSecret)).toEqual(['redis-tls']);
    expect(Buffer.from(tlsSecret['redis-tls']!, 'base64').toString()).toBe('enable');
    for (const dep of deployments(existing)) {
      expect(envOf(dep, 'REDIS_URL')?.value).toBe('rediss://redis.example.internal:6379/3');
      expect(envOf(dep, 'REDIS_TLS_CA_FILE')?.value).toBe('/etc/fusion-proxy/redis-ca/ca.pem');
      expect(at(dep, 'spec', 'template', 'spec', 'volumes')).toContainEqual({
        name: 'redis-ca',
        secret: { secretName: 'redis-ca', items: [{ key: 'ca.pem', path: 'ca.pem' }] },
      });
      expect(containerOf(dep)).toHaveProperty(
        'volumeMounts',
        expect.arrayContaining([{ name: 'redis-ca', mountPath: '/etc/fusion-proxy/redis-ca', readOnly: true }]),
      );
    }

    // No password anywhere: no TriggerAuthentication, no authenticationRef.
    const bundled = rendered('bundled-redis-values.yaml');
    expect(ofKind(bundled.objects, 'TriggerAuthentication')).toEqual([]);
    for (const t of triggersOf(bundled)) {
      expect(t.authenticationRef).toBeUndefined();
      expect(t.metadata.address).toBe(`${FULL}-redis:6379`);
    }
  });

  it('renders a PodDisruptionBudget only where a component can have more than one pod', () => {
    expect(
      ofKind(rendered('defaults-values.yaml').objects, 'PodDisruptionBudget')
        .map((p) => p.metadata.name)
        .sort(),
    ).toEqual([API, WORKER]);
    // bundled: one api pod, workers on KEDA up to 10
    expect(
      ofKind(rendered('bundled-redis-values.yaml').objects, 'PodDisruptionBudget').map((p) => p.metadata.name),
    ).toEqual([WORKER]);
  });
});

describe('exposure', () => {
  it('Ingress: TLS for every host, cert-manager issuer, streaming annotations, only the proxy path', () => {
    const ing = find(rendered('ingress-tls-values.yaml').objects, 'Ingress', API);
    expect(at(ing, 'spec', 'ingressClassName')).toBe('nginx');
    expect(at(ing, 'spec', 'tls')).toEqual([
      { hosts: ['fusion-proxy.example.com', 'fusion.example.org'], secretName: 'fusion-proxy.example.com-tls' },
    ]);
    expect(ing.metadata.annotations).toMatchObject({
      'cert-manager.io/cluster-issuer': 'letsencrypt-prod',
      'nginx.ingress.kubernetes.io/proxy-buffering': 'off',
      'nginx.ingress.kubernetes.io/proxy-request-buffering': 'off',
      'nginx.ingress.kubernetes.io/proxy-body-size': '10m',
    });
    // Longer than REQUEST_TIMEOUT_MS: a stream may be idle between heartbeats, but never this long.
    for (const k of ['proxy-read-timeout', 'proxy-send-timeout'])
      expect(Number(ing.metadata.annotations?.[`nginx.ingress.kubernetes.io/${k}`])).toBeGreaterThan(300);
    const rules = at<Array<{ host: string; http: { paths: unknown[] } }>>(ing, 'spec', 'rules');
    expect(rules.map((r) => r.host)).toEqual(['fusion-proxy.example.com', 'fusion.example.org']);
    for (const rule of rules) {
      expect(rule.http.paths).toEqual([
        { path: '/fusion', pathType: 'Exact', backend: { service: { name: API, port: { name: 'http' } } } },
      ]);
    }
    expect(ofKind(rendered('defaults-values.yaml').objects, 'Ingress')).toEqual([]);
  });

  it('HTTPRoute: attaches to the Gateway and routes only the proxy path to the api Service', () => {
    const r = rendered('httproute-values.yaml');
    const route = find(r.objects, 'HTTPRoute', API);
    expect(at(route, 'spec', 'parentRefs', 0)).toEqual({
      name: 'public-gateway',
      namespace: 'gateway-system',
      sectionName: 'https',
    });
    expect(at(route, 'spec', 'hostnames')).toEqual(['fusion-proxy.example.com']);
    expect(at(route, 'spec', 'rules', 0)).toEqual({
      matches: [{ path: { type: 'Exact', value: '/' } }],
      backendRefs: [{ name: API, port: 8080 }],
      timeouts: { request: '0s' },
    });
    const svc = find(r.objects, 'Service', API);
    expect(at(svc, 'spec', 'ports')).toEqual([{ name: 'http', port: 8080, targetPort: 'http', protocol: 'TCP' }]);
  });

  it("behind the chart's Ingress or HTTPRoute the api trusts one proxy hop, so the password throttle sees clients, not the ingress", () => {
    const api = (file: string, set?: Record<string, string>): K8sObject =>
      find((set ? render({ valuesFiles: [file], setString: set }) : rendered(file)).objects, 'Deployment', API);
    expect(envOf(api('ingress-tls-values.yaml'), 'TRUST_PROXY')?.value).toBe('1');
    expect(envOf(api('httproute-values.yaml'), 'TRUST_PROXY')?.value).toBe('1');
    expect(envOf(api('defaults-values.yaml'), 'TRUST_PROXY')).toBeUndefined();
    expect(envOf(api('ingress-tls-values.yaml', { 'config.trustProxy': '10.0.0.0/8' }), 'TRUST_PROXY')?.value).toBe(
      '10.0.0.0/8',
    );
    expect(
      envOf(find(rendered('ingress-tls-values.yaml').objects, 'Deployment', WORKER), 'TRUST_PROXY'),
    ).toBeUndefined();
  });
});

describe('Redis', () => {
  it('bundled: Valkey (BSD licence), noeviction, no persistence, marked not for production', () => {
    const r = rendered('bundled-redis-values.yaml');
    const dep = find(r.objects, 'Deployment', `${FULL}-redis`);
    const c = containerOf(dep) as ReturnType<typeof containerOf> & { args: string[] };
    expect(c.image).toMatch(/^docker\.io\/valkey\/valkey:8\./);
    expect(c.args[0]).toBe('valkey-server');
    expect(c.args).toEqual(expect.arrayContaining(['--maxmemory-policy', 'noeviction', '--appendonly', 'no']));
    expect(dep.metadata.annotations?.['fusion-proxy/not-for-production']).toMatch(/evaluation/);
    expect(at(dep, 'spec', 'template', 'metadata', 'labels', 'app.kubernetes.io/component')).toBe('redis');
    expect(at(find(r.objects, 'Service', `${FULL}-redis`), 'spec', 'ports', 0, 'port')).toBe(6379);
    expect(at(dep, 'spec', 'template', 'spec', 'securityContext', 'runAsNonRoot')).toBe(true);
    for (const d of deployments(r)) expect(envOf(d, 'REDIS_URL')?.value).toBe(`redis://${FULL}-redis:6379/0`);
    expect(r.raw).toMatch(/EVALUATION ONLY/);
  });

  it('external: host, port, database and user as plain values; the password as is in the chart Secret', () => {
    const r = rendered('external-redis-values.yaml');
    const data = at<Record<string, string>>(find(r.objects, 'Secret', FULL), 'data');
    expect(Buffer.from(data['redis-password']!, 'base64').toString()).toBe('p@ss:w/rd%40');
    for (const d of deployments(r)) {
      expect(envOf(d, 'REDIS_URL')?.value).toBe('redis://10.0.0.12:6390/0');
      expect(envOf(d, 'REDIS_USERNAME')?.value).toBe('fusion');
      expect(envOf(d, 'REDIS_PASSWORD')?.valueFrom?.secretKeyRef).toEqual({ name: FULL, key: 'redis-password' });
    }
    expect(ofKind(r.objects, 'Deployment').map((d) => d.metadata.name)).not.toContain(`${FULL}-redis`);
  });
});

describe('extension points and the api preStop delay', () => {
  it('extra volumes and mounts, init containers, sidecars, priority class and lifecycle reach the pods', () => {
    const r = rendered('scheduling-values.yaml');
    const [api, worker] = deployments(r);
    const spec = (d: K8sObject): Record<string, unknown> => at(d, 'spec', 'template', 'spec');
    expect(spec(api!).priorityClassName).toBe('identity-critical');
    expect(spec(worker!).priorityClassName).toBe('identity-batch');
    expect(spec(api!).initContainers).toEqual([
      { name: 'wait-for-dns', image: 'busybox:1.36', command: ['sh', '-c', 'nslookup kubernetes.default'] },
    ]);
    expect(at<Array<{ name: string }>>(api, 'spec', 'template', 'spec', 'containers').map((c) => c.name)).toEqual([
      'api',
      'log-shipper',
    ]);
    for (const d of [api!, worker!]) {
      expect(spec(d).volumes).toContainEqual({ name: 'corp-ca', configMap: { name: 'corp-ca-bundle' } });
      expect(containerOf(d)).toHaveProperty(
        'volumeMounts',
        expect.arrayContaining([{ name: 'corp-ca', mountPath: '/etc/corp-ca', readOnly: true }]),
      );
    }
    // A lifecycle of one's own replaces the preStop delay, and the drain budget follows it.
    expect(containerOf(api!)).toHaveProperty('lifecycle', { preStop: { exec: { command: ['sleep', '15'] } } });
  });

  it('the api sleeps before SIGTERM (preStop), so it keeps serving while endpoints are withdrawn; the drain fits in the grace', () => {
    const api = find(rendered('defaults-values.yaml').objects, 'Deployment', API);
    expect(containerOf(api)).toHaveProperty('lifecycle', { preStop: { exec: { command: ['sleep', '5'] } } });
    const grace = at<number>(api, 'spec', 'template', 'spec', 'terminationGracePeriodSeconds');
    expect(Number(envOf(api, 'SHUTDOWN_GRACE_MS')?.value)).toBe((grace - 5 - 10) * 1000);
    const none = find(
      render({ valuesFiles: ['defaults-values.yaml'], set: { 'api.preStopDelaySeconds': 0 } }).objects,
      'Deployment',
      API,
    );
    expect(containerOf(none)).not.toHaveProperty('lifecycle');
    expect(Number(envOf(none, 'SHUTDOWN_GRACE_MS')?.value)).toBe((grace - 10) * 1000);
  });
});

describe('NetworkPolicy (on by default: only the served ports, from anywhere; strict as an option)', () => {
  type Rule = { from?: unknown[]; to?: unknown[]; ports?: Array<{ port: number | string; protocol: string }> };

  it('default: the api takes http and metrics from any source (ingress controller and Prometheus wherever they live), egress open', () => {
    const r = rendered('defaults-values.yaml');
    const np = find(r.objects, 'NetworkPolicy', API);
    expect(at(np, 'spec', 'podSelector', 'matchLabels', 'app.kubernetes.io/component')).toBe('api');
    expect(at(np, 'spec', 'policyTypes')).toEqual(['Ingress']);
    expect(at<Rule[]>(np, 'spec', 'ingress')).toEqual([
      { ports: [{ port: 'http', protocol: 'TCP' }] },
      { ports: [{ port: 'metrics', protocol: 'TCP' }] },
    ]);
    expect(np.spec).not.toHaveProperty('egress');
    const worker = find(r.objects, 'NetworkPolicy', WORKER);
    expect(at<Rule[]>(worker, 'spec', 'ingress')).toEqual([{ ports: [{ port: 'metrics', protocol: 'TCP' }] }]);
    expect(at(worker, 'spec', 'policyTypes')).toEqual(['Ingress']);
    // The named ports resolve to what the server listens on: PORT for http, METRICS_PORT for metrics.
    const api = find(r.objects, 'Deployment', API);
    const portOf = (name: string): number | undefined =>
      containerOf(api).ports?.find((p) => p.name === name)?.containerPort;
    expect(portOf('metrics')).toBe(Number(envOf(api, 'METRICS_PORT')?.value));
    expect(portOf('http')).toBe(Number(envOf(api, 'PORT')?.value));
  });

  it('strict: the configured peers only (plus the helm test pod), egress to DNS, Redis and the platform ports', () => {
    const r = rendered('external-redis-values.yaml');
    const np = find(r.objects, 'NetworkPolicy', API);
    expect(at(np, 'spec', 'policyTypes')).toEqual(['Ingress', 'Egress']);
    const ingress = at<Rule[]>(np, 'spec', 'ingress');
    expect(ingress[0]).toEqual({
      from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } } }],
      ports: [{ port: 'http', protocol: 'TCP' }],
    });
    expect(JSON.stringify(ingress[1])).toContain('"app.kubernetes.io/component":"test"');
    expect(ingress[2]).toEqual({
      from: [{ namespaceSelector: {}, podSelector: { matchLabels: { 'app.kubernetes.io/name': 'prometheus' } } }],
      ports: [{ port: 'metrics', protocol: 'TCP' }],
    });
    const egressPorts = at<Rule[]>(np, 'spec', 'egress').flatMap((x) => (x.ports ?? []).map((p) => p.port));
    expect(egressPorts.sort()).toEqual([53, 53, 6390]);
    const worker = find(r.objects, 'NetworkPolicy', WORKER);
    const egress = at<Rule[]>(worker, 'spec', 'egress');
    expect(egress.find((x) => x.ports?.[0]?.port === 6390)?.to).toEqual([{ ipBlock: { cidr: '10.0.0.12/32' } }]);
    const platform = egress.find((x) => x.ports?.some((p) => p.port === 443));
    expect(platform?.ports?.map((p) => p.port)).toEqual([443, 3128]);
    expect(platform?.to).toEqual([{ ipBlock: { cidr: '0.0.0.0/0', except: ['10.0.0.0/8'] } }]);
  });

  it("bundled Valkey accepts only this release's api and workers, plus KEDA's operator wherever it runs", () => {
    const np = find(rendered('bundled-redis-values.yaml').objects, 'NetworkPolicy', `${FULL}-redis`);
    const from = at<unknown[]>(np, 'spec', 'ingress', 0, 'from');
    expect(from).toHaveLength(2);
    expect(JSON.stringify(from[0])).toContain('"values":["api","worker"]');
    expect(from[1]).toEqual({
      namespaceSelector: {},
      podSelector: { matchLabels: { 'app.kubernetes.io/name': 'keda-operator' } },
    });
    expect(at(np, 'spec', 'egress')).toEqual([]);
  });

  it('can be turned off', () => {
    expect(
      ofKind(
        render({ valuesFiles: ['defaults-values.yaml'], set: { 'networkPolicy.enabled': false } }).objects,
        'NetworkPolicy',
      ),
    ).toEqual([]);
  });
});

describe('metrics objects', () => {
  it('ServiceMonitors for api and workers carry the Prometheus selector labels and scrape /metrics on the metrics port', () => {
    const r = rendered('monitoring-values.yaml');
    const selects = (sel: Record<string, string>, labels: Record<string, string> | undefined): boolean =>
      Object.entries(sel).every(([k, v]) => labels?.[k] === v);
    for (const [name, component, service] of [
      [API, 'api', `${API}-metrics`],
      [WORKER, 'worker', WORKER],
    ] as const) {
      const sm = find(r.objects, 'ServiceMonitor', name);
      expect(sm.metadata.labels?.release).toBe('kube-prometheus-stack');
      expect(at(sm, 'spec', 'endpoints')).toHaveLength(1);
      expect(at(sm, 'spec', 'endpoints', 0)).toMatchObject({ port: 'metrics', path: '/metrics' });
      const sel = at<Record<string, string>>(sm, 'spec', 'selector', 'matchLabels');
      expect(sel['app.kubernetes.io/component']).toBe(component);
      // It selects exactly one Service: headless, with only the metrics port, aimed at the container port named
      // metrics.
      const selected = ofKind(r.objects, 'Service').filter((s) => selects(sel, s.metadata.labels));
      expect(selected.map((s) => s.metadata.name)).toEqual([service]);
      expect(at(selected[0]!, 'spec', 'clusterIP')).toBe('None');
      expect(at(selected[0]!, 'spec', 'ports')).toEqual([
        { name: 'metrics', port: 9090, targetPort: 'metrics', protocol: 'TCP' },
      ]);
      expect(at(selected[0]!, 'spec', 'selector')).toEqual(
        at(find(r.objects, 'Deployment', name), 'spec', 'selector', 'matchLabels'),
      );
    }
    // The api's traffic Service (the Ingress / HTTPRoute backend) carries only http.
    expect(at<Array<{ name: string }>>(find(r.objects, 'Service', API), 'spec', 'ports').map((p) => p.name)).toEqual([
      'http',
    ]);
    // The alerts select the jobs Prometheus gives those Services (job = Service name).
    const rules = JSON.stringify(at(find(r.objects, 'PrometheusRule', FULL), 'spec'));
    expect(rules).toContain(`job=~\\"${API}-metrics|${WORKER}\\"`);
    expect(find(r.objects, 'PrometheusRule', FULL).metadata.labels?.release).toBe('kube-prometheus-stack');
    const cm = find(r.objects, 'ConfigMap', `${FULL}-dashboard`);
    expect(cm.metadata.labels?.grafana_dashboard).toBe('1');
    expect(cm.metadata.annotations?.grafana_folder).toBe('Identity');
    expect(() => JSON.parse(at<string>(cm, 'data', 'fusion-proxy.json'))).not.toThrow();
  });

  it('the PrometheusRule has the four alerts the issue asks for', () => {
    const rule = find(rendered('monitoring-values.yaml').objects, 'PrometheusRule', FULL);
    const alerts = at<Array<{ alert: string }>>(rule, 'spec', 'groups', 0, 'rules').map((r) => r.alert);
    expect(alerts).toEqual(
      expect.arrayContaining([
        'FusionProxyPlatformRateLimited',
        'FusionProxyQueueBacklog',
        'FusionProxyJobsFailing',
        'FusionProxyNoWorkers',
        'FusionProxyDown',
      ]),
    );
  });
});
