#!/usr/bin/env node
// Runs the Dockerfile's final stage outside Docker (CI has no Docker engine): copies exactly what the
// final stage COPYs into an empty directory (production dependencies = the lockfile's non-dev
// packages, which is what `npm ci --omit=dev` installs), starts the image's command there for each
// role the chart runs (with METRICS_PORT, as the chart sets it), and checks the probes and the
// metrics port the chart uses. Needs `npm run build` first.
// A file the server reads at runtime but the image lacks makes this fail.
import { spawn, spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const PASSWORD = 'runtime-check-password-0123456789';

function fail(message) {
  console.error(`runtime-stage-check: ${message}`);
  process.exitCode = 1;
  throw new Error(message);
}

/** Logical lines of the Dockerfile's last stage, and its resolved argv (ENTRYPOINT + CMD). */
function finalStage() {
  const lines = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8')
    .replace(/\\\r?\n/g, ' ')
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const start = lines
    .map((l, i) => (/^FROM\s/i.test(l) ? i : -1))
    .filter((i) => i >= 0)
    .at(-1);
  const stage = lines.slice(start + 1);
  const json = (op) =>
    JSON.parse(stage.find((l) => l.toUpperCase().startsWith(`${op} `))?.slice(op.length + 1) ?? '[]');
  return { copies: stage.filter((l) => /^COPY\s/i.test(l)), argv: [...json('ENTRYPOINT'), ...json('CMD')] };
}

/** Hard-links (or copies across devices) a file tree. */
function linkTree(from, to) {
  const st = statSync(from);
  if (st.isDirectory()) {
    mkdirSync(to, { recursive: true });
    for (const e of readdirSync(from)) linkTree(path.join(from, e), path.join(to, e));
  } else {
    try {
      linkSync(from, to);
    } catch {
      cpSync(from, to);
    }
  }
}

/** node_modules as `npm ci --omit=dev` lays it out: the lockfile's packages not marked dev. */
function productionModules(dest) {
  const lock = JSON.parse(readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8'));
  for (const [key, meta] of Object.entries(lock.packages)) {
    if (!key.startsWith('node_modules/') || meta.dev) continue;
    const src = path.join(ROOT, key);
    if (!existsSync(src)) {
      if (meta.optional) continue; // another platform's binary
      fail(`${key} is a production dependency but is not installed; run npm ci`);
    }
    // Nested packages are linked by their own entry; copy only this package's own files.
    const target = path.join(dest, key);
    mkdirSync(target, { recursive: true });
    for (const e of readdirSync(src)) if (e !== 'node_modules') linkTree(path.join(src, e), path.join(target, e));
  }
  // npm's .bin links are not needed at runtime.
}

function assemble(dir) {
  const { copies, argv } = finalStage();
  if (copies.length === 0) fail('the final stage COPYs nothing');
  for (const line of copies) {
    const parts = line.split(/\s+/).slice(1);
    const from = parts.find((p) => p.startsWith('--from='))?.slice('--from='.length);
    const paths = parts.filter((p) => !p.startsWith('--'));
    const dest = paths.pop();
    for (const src of paths) {
      const rel = from ? path.relative('/app', src) : src;
      const target = path.join(
        dir,
        dest.endsWith('/') || paths.length > 1 ? path.join(dest, path.basename(rel)) : dest,
      );
      if (from === 'deps' && rel === 'node_modules') productionModules(dir);
      else if ((from === 'build' || from === undefined) && existsSync(path.join(ROOT, rel)))
        linkTree(path.join(ROOT, rel), target);
      else fail(`cannot reproduce "${line}" outside Docker (build the artifacts first: npm run build)`);
    }
  }
  if (!argv.includes('node')) fail(`the image command ${JSON.stringify(argv)} does not run node`);
  // What tini runs (after its "--"), as the image runs it: the heap-limit script, then node.
  return argv.slice(argv.indexOf('--') + 1);
}

const freePort = () =>
  new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

async function get(port, route) {
  const res = await fetch(`http://127.0.0.1:${port}${route}`);
  return { status: res.status, body: await res.text() };
}

async function waitHealthy(port, proc, name) {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) fail(`${name} exited with ${proc.exitCode}:\n${proc.output}`);
    try {
      if ((await get(port, '/healthz')).status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  fail(`${name}: /healthz did not answer within 30 s:\n${proc.output}`);
}

function start(dir, [command, ...args], env, name) {
  const proc = spawn(path.join(dir, command), args, {
    cwd: dir,
    // The image's script runs `node` from PATH: this node.
    env: {
      PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH}`,
      HOME: dir,
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  proc.output = '';
  proc.stdout.on('data', (d) => (proc.output += d));
  proc.stderr.on('data', (d) => (proc.output += d));
  proc.name = name;
  return proc;
}

async function stop(proc) {
  if (proc.exitCode !== null) fail(`${proc.name} exited early with ${proc.exitCode}:\n${proc.output}`);
  const exited = new Promise((r) => proc.once('exit', (code, signal) => r({ code, signal })));
  proc.kill('SIGTERM');
  const timer = setTimeout(() => proc.kill('SIGKILL'), 15_000);
  const { code, signal } = await exited;
  clearTimeout(timer);
  if (code !== 0)
    fail(`${proc.name} did not exit cleanly on SIGTERM (code ${code}, signal ${signal}):\n${proc.output}`);
}

/** Probes on `port`; /metrics on `metricsPort` (METRICS_PORT, as the chart sets it), and then not on `port`. */
async function expectProbes(port, name, proc, mode, metricsPort = port) {
  await waitHealthy(port, proc, name);
  const ready = await get(port, '/readyz');
  if (ready.status !== 200 || JSON.parse(ready.body).mode !== mode)
    fail(`${name}: /readyz answered ${ready.status} ${ready.body}`);
  const metrics = await get(metricsPort, '/metrics');
  if (metrics.status !== 200 || !metrics.body.includes('fusion_queue_workers'))
    fail(`${name}: /metrics on port ${metricsPort} answered ${metrics.status}`);
  if (metricsPort !== port) {
    const onMain = await get(port, '/metrics');
    if (onMain.status !== 404)
      fail(`${name}: /metrics is still served on PORT (${onMain.status}) although METRICS_PORT is set`);
  }
  return metrics.body;
}

async function main() {
  const dir = mkdtempSync(path.join(tmpdir(), 'fusion-proxy-runtime-'));
  const procs = [];
  try {
    const args = assemble(dir);
    const began = Date.now();

    // Embedded mode (docker run without Redis).
    const port = await freePort();
    const embedded = start(dir, args, { PORT: String(port), PROXY_PASSWORD: PASSWORD }, 'embedded server');
    procs.push(embedded);
    const metrics = await expectProbes(port, 'embedded server', embedded, 'embedded');
    // The dashboard and the alerts use only METRIC names (a chart test checks that): the built process exports them all.
    const { METRIC } = createRequire(import.meta.url)(path.join(dir, 'dist/observability/metric-names.js'));
    const missing = Object.values(METRIC).filter((name) => !metrics.includes(`# TYPE ${name} `));
    if (missing.length > 0) fail(`embedded server: /metrics lacks ${missing.join(', ')}`);
    await stop(embedded);

    // Queue mode, as the chart runs it: ROLE=api and ROLE=worker on their own ports.
    const hasRedis = spawnSync('redis-server', ['--version']).status === 0;
    if (!hasRedis) {
      console.log('runtime-stage-check: redis-server not found; queue mode skipped');
    } else {
      const redisPort = await freePort();
      const redis = spawn('redis-server', ['--port', String(redisPort), '--save', '', '--appendonly', 'no'], {
        stdio: 'ignore',
      });
      procs.push(redis);
      const [apiPort, apiMetricsPort, workerPort, workerMetricsPort] = [
        await freePort(),
        await freePort(),
        await freePort(),
        await freePort(),
      ];
      const common = { REDIS_URL: `redis://127.0.0.1:${redisPort}`, PROXY_PASSWORD: PASSWORD };
      const worker = start(
        dir,
        args,
        { ...common, ROLE: 'worker', PORT: String(workerPort), METRICS_PORT: String(workerMetricsPort) },
        'worker',
      );
      const api = start(
        dir,
        args,
        { ...common, ROLE: 'api', PORT: String(apiPort), METRICS_PORT: String(apiMetricsPort) },
        'api',
      );
      procs.push(worker, api);
      await expectProbes(workerPort, 'worker', worker, 'worker', workerMetricsPort);
      const apiMetrics = await expectProbes(apiPort, 'api', api, 'queue', apiMetricsPort);
      if (!/^fusion_queue_workers 1$/m.test(apiMetrics))
        fail('api: fusion_queue_workers is not 1 with one worker connected');
      await stop(worker);
      await stop(api);
      redis.kill('SIGTERM');
    }
    console.log(
      `runtime-stage-check: the final image stage serves /healthz, /readyz and /metrics (${Date.now() - began} ms)`,
    );
  } finally {
    for (const p of procs) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  if (!process.exitCode) console.error(e);
  process.exitCode = 1;
});
