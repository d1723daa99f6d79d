import { cpSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { loadEnv } from '../../src/server/env';
import { CHART_DIR, CI_VALUES_DIR, at, find, helm, render, renderFailure } from './support/helm';

const API = 'fp-fusion-proxy-api';
const WORKER = 'fp-fusion-proxy-worker';
const REDIS = { 'redis.host': 'redis' };

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

describe('helm lint on the defaults (what the chart README says it does)', () => {
  it('names each required setting as a Fail line (Helm ignores `fail` in lint), and the README says so', () => {
    const res = helm(['lint', CHART_DIR]);
    const out = `${res.stdout}${res.stderr}`;
    expect(out).toMatch(/\[INFO\] Fail: fusion-proxy: set auth\.proxyPassword/);
    expect(out).toMatch(/\[INFO\] Fail: fusion-proxy: no Redis configured/);
    const readme = readFileSync(path.join(CHART_DIR, 'README.md'), 'utf8').replace(/\s+/g, ' ');
    expect(readme).toContain("Helm's lint ignores a template's `fail`, so those lines are the findings");
    expect(readme).toContain('helm lint charts/fusion-proxy --strict -f my-values.yaml');
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

  it('without any Redis, with two Redis sources, or with contradictory Redis settings', () => {
    expect(renderFailure({ set: { 'auth.proxyPassword': 'x' } })).toMatch(
      /no Redis configured: set redis\.host .* redis\.bundled\.enabled=true/,
    );
    expect(renderFailure({ set: { 'auth.proxyPassword': 'x', ...REDIS, 'redis.bundled.enabled': true } })).toMatch(
      /only one of redis\.host and redis\.bundled\.enabled/,
    );
    expect(
      renderFailure({
        set: { 'auth.proxyPassword': 'x', ...REDIS, 'redis.password': 'a', 'redis.existingSecret': 'b' },
      }),
    ).toMatch(/redis\.password or redis\.existingSecret, not both/);
    expect(renderFailure({ set: { 'auth.proxyPassword': 'x', ...REDIS, 'redis.tls.caSecret': 'ca' } })).toMatch(
      /caSecret needs redis\.tls\.enabled=true/,
    );
    expect(
      renderFailure({ set: { 'auth.proxyPassword': 'x', 'redis.bundled.enabled': true, 'redis.password': 'a' } }),
    ).toMatch(/settings of an external Redis/);
  });

  it('in strict NetworkPolicy mode without the ingress controller and Prometheus peers', () => {
    expect(renderFailure({ valuesFiles: ['defaults-values.yaml'], set: { 'networkPolicy.strict': true } })).toMatch(
      /networkPolicy\.strict needs networkPolicy\.ingressControllerPeers .*networkPolicy\.metricsPeers/,
    );
  });

  it('when KEDA and the worker HPA are both enabled', () => {
    expect(renderFailure({ valuesFiles: ['keda-values.yaml'], set: { 'worker.autoscaling.enabled': true } })).toMatch(
      /mutually exclusive/,
    );
  });

  it('when the job-encryption key is not 32 bytes, or an HTTPRoute has no Gateway', () => {
    expect(renderFailure({ valuesFiles: ['defaults-values.yaml'], set: { 'auth.jobEncryptionKey': 'short' } })).toMatch(
      /auth\.jobEncryptionKey: Does not match pattern/,
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
    expect(renderFailure({ valuesFiles: ['defaults-values.yaml'], set: { 'redis.host': 'redis://x' } })).toMatch(
      /redis\.host/,
    );
    // Misspelt keys render nothing silently any more.
    for (const [key, path] of [
      ['ingress.enable', 'ingress'],
      ['worker.keda.enable', 'worker.keda'],
      ['api.replicas', 'api'],
      ['networkPolicy.strictt', 'networkPolicy'],
      ['redis.tls.ca', 'redis.tls'],
      ['metrics.serviceMonitor.enable', 'metrics.serviceMonitor'],
    ] as const) {
      expect(renderFailure({ valuesFiles: ['defaults-values.yaml'], set: { [key]: true } })).toContain(
        `${path}: Additional property ${key.split('.').pop()} is not allowed`,
      );
    }
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
      "rollout restart deployment -l 'app.kubernetes.io/instance=fp,app.kubernetes.io/component in (api,worker)'",
    );
  });
});

describe('job-encryption key: the chart accepts exactly what the pods accept', () => {
  const hex = '0123456789abcdef'.repeat(4);
  const b64 = (n: number): string => Buffer.alloc(n, 0xfb).toString('base64');
  const cases: Array<[string, string]> = [
    ['64 hex digits', hex],
    ['standard base64 of 32 bytes', b64(32)],
    ['standard base64 of 32 bytes without padding', b64(32).replace(/=+$/, '')],
    ['URL-safe base64 of 32 bytes (- and _)', Buffer.alloc(32, 0xfb).toString('base64url')],
    ['base64 of 31 bytes', b64(31)],
    ['base64 of 33 bytes', b64(33)],
    ['63 hex digits', hex.slice(1)],
    ['a word', 'short'],
  ];

  it.each(cases)('%s', (_what, key) => {
    let podsAccept = true;
    try {
      loadEnv({ REDIS_URL: 'redis://r:6379', PROXY_PASSWORD: 'x'.repeat(20), JOB_ENCRYPTION_KEY: key });
    } catch {
      podsAccept = false;
    }
    const res = helm([
      'template',
      'fp',
      CHART_DIR,
      '--values',
      path.join(CI_VALUES_DIR, 'defaults-values.yaml'),
      '--set-string',
      `auth.jobEncryptionKey=${key}`,
    ]);
    expect({ chartAccepts: res.status === 0, podsAccept }).toEqual({ chartAccepts: podsAccept, podsAccept });
    if (!podsAccept) expect(res.stderr).toMatch(/jobEncryptionKey/);
  });

  it('the URL-safe key the issue saw is refused by both (so the pods never crash-loop on it)', () => {
    expect(cases.filter(([w]) => w.startsWith('URL-safe'))[0]![1]).toMatch(/[-_]/);
  });
});

describe('chart README "Install"', () => {
  it('its helm install command renders with the Secret keys its kubectl commands create', () => {
    const readme = readFileSync(path.join(CHART_DIR, 'README.md'), 'utf8');
    const section = readme.split(/^## /m).find((s) => s.startsWith('Install'));
    expect(section).toBeDefined();
    const script = section!.replace(/\\\n\s*/g, ' ');
    const install = script.split('\n').find((l) => l.startsWith('helm install'))!;
    expect(install).toBeDefined();
    const sets = [...install.matchAll(/--set (\S+)/g)].flatMap((m) => m[1]!.split(','));
    const set = Object.fromEntries(sets.map((kv) => kv.split('=') as [string, string]));
    const r = render({ release: 'fusion-proxy', namespace: 'fusion-proxy', set });
    const created = new Map<string, Set<string>>();
    for (const line of script.split('\n')) {
      const name = /create secret generic (\S+)/.exec(line)?.[1];
      if (name) created.set(name, new Set([...line.matchAll(/--from-(?:literal|file)=([\w.-]+)=/g)].map((m) => m[1]!)));
    }
    const refs: Array<{ name: string; key: string; optional?: boolean }> = [];
    for (const dep of r.objects.filter((o) => o.kind === 'Deployment')) {
      const env = at<Array<{ valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean } } }>>(
        dep,
        'spec',
        'template',
        'spec',
        'containers',
        0,
        'env',
      );
      refs.push(...env.map((e) => e.valueFrom?.secretKeyRef).filter((x) => x !== undefined));
    }
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs) {
      if (ref.optional) continue;
      expect(created.get(ref.name)).toContain(ref.key);
    }
    expect(at(find(r.objects, 'Ingress', 'fusion-proxy-api'), 'spec', 'tls', 0, 'hosts')).toEqual([
      'fusion-proxy.example.com',
    ]);
  });
});

describe('README "Deploy to Kubernetes"', () => {
  it('runs the same kubectl and helm commands as the chart README\'s tested "Install"', () => {
    const commands = (file: string, heading: string): string[] => {
      const section = readFileSync(file, 'utf8')
        .split(/^## /m)
        .find((s) => s.startsWith(heading));
      expect(section).toBeDefined();
      return section!
        .replace(/\\\n\s*/g, ' ')
        .split('\n')
        .map((l) => l.replace(/\s+#.*$/, '').trim())
        .filter((l) => /^(kubectl|helm) /.test(l));
    };
    const top = commands(path.join(CHART_DIR, '../../README.md'), 'Deploy to Kubernetes');
    const chart = commands(path.join(CHART_DIR, 'README.md'), 'Install');
    expect(top.length).toBeGreaterThanOrEqual(4);
    expect(top).toEqual(chart);
  });
});

describe('values.schema.json', () => {
  type Schema = { type?: unknown; properties?: Record<string, Schema>; additionalProperties?: unknown; $ref?: string };
  const schema = JSON.parse(readFileSync(path.join(CHART_DIR, 'values.schema.json'), 'utf8')) as Schema & {
    definitions: Record<string, Schema>;
  };
  const resolve = (s: Schema): Schema => (s.$ref ? schema.definitions[s.$ref.split('/').pop()!]! : s);

  it('describes every key of values.yaml, and closes every object whose keys are known', () => {
    const values = parse(readFileSync(path.join(CHART_DIR, 'values.yaml'), 'utf8')) as Record<string, unknown>;
    const problems: string[] = [];
    const walk = (v: unknown, s: Schema, at: string): void => {
      const r = resolve(s);
      if (r.properties) {
        if (r.additionalProperties !== false) problems.push(`${at || '(root)'}: additionalProperties is not false`);
        if (v && typeof v === 'object' && !Array.isArray(v))
          for (const [k, child] of Object.entries(v)) {
            const cs = r.properties[k];
            if (!cs) problems.push(`${at}${at ? '.' : ''}${k}: not in the schema`);
            else walk(child, cs, `${at}${at ? '.' : ''}${k}`);
          }
      }
    };
    walk(values, schema, '');
    expect(problems).toEqual([]);
  });
});
