import { cpSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { CHART_DIR, CI_VALUES_DIR, at, find, helm, render, renderFailure } from './support/helm';

const API = 'fp-fusion-proxy-api';
const WORKER = 'fp-fusion-proxy-worker';
const REDIS = { 'redis.url': 'redis://redis:6379' };

describe('helm lint', () => {
  it.each(
    readdirSync(CI_VALUES_DIR)
      .filter((f) => f.endsWith('-values.yaml'))
      .sort(),
  )('passes with ci/%s', (file) => {
    const res = helm(['lint', CHART_DIR, '--strict', '--values', path.join(CI_VALUES_DIR, file)]);
    expect(`${res.stdout}${res.stderr}`).toContain('1 chart(s) linted, 0 chart(s) failed');
    expect(res.status).toBe(0);
  });
});

describe('the render fails with a clear message', () => {
  it('without a proxy password: values.yaml ships no default secret', () => {
    const values = readFileSync(path.join(CHART_DIR, 'values.yaml'), 'utf8');
    const auth = (parse(values) as { auth: Record<string, string> }).auth;
    expect(auth.proxyPassword).toBe('');
    expect(auth.jobEncryptionKey).toBe('');
    expect(renderFailure({ set: REDIS })).toMatch(/set auth\.proxyPassword .* or auth\.existingSecret/);
  });

  it('without any Redis, or with two Redis sources', () => {
    expect(renderFailure({ set: { 'auth.proxyPassword': 'x' } })).toMatch(
      /no Redis configured: set redis\.url or redis\.existingSecret .* redis\.bundled\.enabled=true/,
    );
    expect(renderFailure({ set: { 'auth.proxyPassword': 'x', ...REDIS, 'redis.bundled.enabled': true } })).toMatch(
      /only one of redis\.url, redis\.existingSecret and redis\.bundled\.enabled/,
    );
  });

  it('when KEDA and the worker HPA are both enabled', () => {
    expect(renderFailure({ valuesFiles: ['keda-values.yaml'], set: { 'worker.autoscaling.enabled': true } })).toMatch(
      /mutually exclusive/,
    );
  });

  it('when KEDA cannot know the Redis address of an existing Secret', () => {
    expect(
      renderFailure({ valuesFiles: ['existing-secret-values.yaml'], set: { 'worker.keda.enabled': true } }),
    ).toMatch(/needs redis\.address/);
  });

  it('when the job-encryption key is not 32 bytes, or an HTTPRoute has no Gateway', () => {
    expect(renderFailure({ valuesFiles: ['defaults-values.yaml'], set: { 'auth.jobEncryptionKey': 'short' } })).toMatch(
      /must be 32 bytes/,
    );
    expect(renderFailure({ valuesFiles: ['defaults-values.yaml'], set: { 'httpRoute.enabled': true } })).toMatch(
      /needs httpRoute\.parentRefs/,
    );
  });

  it('when the metrics port is the HTTP port (then /metrics would share the port the ingress reaches)', () => {
    expect(renderFailure({ valuesFiles: ['defaults-values.yaml'], set: { 'metrics.port': 8080 } })).toMatch(
      /metrics\.port must differ from config\.port/,
    );
    expect(renderFailure({ valuesFiles: ['defaults-values.yaml'], set: { 'metrics.port': 70000 } })).toMatch(
      /metrics\.port/,
    );
  });

  it('when a value has the wrong type or an unknown key (values.schema.json)', () => {
    expect(renderFailure({ valuesFiles: ['defaults-values.yaml'], setString: { 'api.replicaCount': 'two' } })).toMatch(
      /api\.replicaCount: Invalid type\. Expected: integer, given: string/,
    );
    expect(renderFailure({ valuesFiles: ['defaults-values.yaml'], set: { 'config.logLevel': 'verbose' } })).toMatch(
      /config\.logLevel/,
    );
    expect(
      renderFailure({ valuesFiles: ['defaults-values.yaml'], set: { 'config.heartbeatIntervalMs': 60000 } }),
    ).toMatch(/heartbeatIntervalMs/);
    expect(renderFailure({ valuesFiles: ['defaults-values.yaml'], set: { proxyPassword: 'typo' } })).toMatch(
      /Additional property proxyPassword is not allowed/,
    );
    expect(renderFailure({ valuesFiles: ['defaults-values.yaml'], set: { 'redis.url': 'http://x' } })).toMatch(
      /redis\.url/,
    );
  });
});

describe('checksum annotation', () => {
  const checksums = (password: string): string[] => {
    const r = render({ set: { 'auth.proxyPassword': password, ...REDIS } });
    return [API, WORKER].map((n) =>
      at<string>(find(r.objects, 'Deployment', n), 'spec', 'template', 'metadata', 'annotations', 'checksum/secret'),
    );
  };

  it('rolls both Deployments when the password changes, and only then', () => {
    const [a1, w1] = checksums('first-password-123456');
    const [a2, w2] = checksums('first-password-123456');
    const [a3, w3] = checksums('second-password-123456');
    expect(a1).toMatch(/^[0-9a-f]{64}$/);
    expect([a2, w2]).toEqual([a1, w1]);
    expect(a3).not.toBe(a1);
    expect(w3).not.toBe(w1);
  });
});

describe('NOTES.txt', () => {
  // helm template skips NOTES.txt; render it through a copy of the chart that wraps it in an object.
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'fusion-proxy-notes-'));
    cpSync(CHART_DIR, path.join(dir, 'chart'), { recursive: true });
    const notes = path.join(dir, 'chart/templates/NOTES.txt');
    const text = readFileSync(notes, 'utf8');
    renameSync(notes, path.join(dir, 'chart/templates/_notes.tpl'));
    writeFileSync(path.join(dir, 'chart/templates/_notes.tpl'), `{{- define "test.notes" -}}\n${text}\n{{- end -}}\n`);
    writeFileSync(
      path.join(dir, 'chart/templates/notes-probe.yaml'),
      'kind: NotesProbe\nmetadata:\n  name: notes\nnotes: {{ include "test.notes" . | toJson }}\n',
    );
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const notes = (valuesFiles: string[]): string => {
    const r = render({ valuesFiles, chartDir: path.join(dir, 'chart') });
    return at<string>(find(r.objects, 'NotesProbe', 'notes'), 'notes');
  };

  it('tells the operator the proxy URL and how to set the password in the platform', () => {
    const text = notes(['ingress-tls-values.yaml']);
    expect(text).toContain('https://fusion-proxy.example.com/fusion');
    expect(text).toContain('"Proxy URL"');
    expect(text).toContain('"Proxy password"');
    expect(text).toContain(
      "kubectl -n fusion get secret fp-fusion-proxy -o jsonpath='{.data.proxy-password}' | base64 -d",
    );
  });

  it('without an Ingress, explains the port-forward; with the bundled Redis, warns', () => {
    const text = notes(['bundled-redis-values.yaml']);
    expect(text).toContain('kubectl -n fusion port-forward svc/fp-fusion-proxy-api 8080:8080');
    expect(text).toMatch(/WARNING: redis\.bundled\.enabled=true .* WITHOUT persistence/s);
    expect(text).toContain('bull:fusion-commands:wait');
    expect(notes(['existing-secret-values.yaml'])).toContain(
      'rollout restart deployment -l app.kubernetes.io/instance=fp',
    );
  });
});

describe('README "Deploy to Kubernetes"', () => {
  it('its helm install command renders with the Secret keys its kubectl command creates', () => {
    const readme = readFileSync(path.join(CHART_DIR, '../../README.md'), 'utf8');
    const section = readme.split(/^## /m).find((s) => s.startsWith('Deploy to Kubernetes'));
    expect(section).toBeDefined();
    const script = section!.replace(/\\\n\s*/g, ' ');
    const install = script.split('\n').find((l) => l.startsWith('helm install'))!;
    const sets = [...install.matchAll(/--set (\S+)/g)].flatMap((m) => m[1]!.split(','));
    const set = Object.fromEntries(sets.map((kv) => kv.split('=') as [string, string]));
    const r = render({ release: 'fusion-proxy', namespace: 'fusion-proxy', set });
    const created = new Set([...script.matchAll(/--from-literal=([\w-]+)=/g)].map((m) => m[1]));
    const secretName = /create secret generic (\S+)/.exec(script)?.[1];
    for (const dep of r.objects.filter((o) => o.kind === 'Deployment')) {
      const env = at<Array<{ valueFrom?: { secretKeyRef?: { name: string; key: string } } }>>(
        dep,
        'spec',
        'template',
        'spec',
        'containers',
        0,
        'env',
      );
      for (const ref of env.map((e) => e.valueFrom?.secretKeyRef).filter((x) => x !== undefined)) {
        expect(ref.name).toBe(secretName);
        expect(created).toContain(ref.key);
      }
    }
    expect(at(find(r.objects, 'Ingress', 'fusion-proxy-api'), 'spec', 'tls', 0, 'hosts')).toEqual([
      'fusion-proxy.example.com',
    ]);
  });
});
