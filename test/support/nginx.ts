import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port';
import { scaled } from './time-factor';

export interface RunningNginx {
  url: string;
  close(): Promise<void>;
}

function nginxBinary(): string {
  for (const candidate of ['nginx', '/usr/sbin/nginx']) {
    const r = spawnSync(candidate, ['-v'], { encoding: 'utf8' });
    if (!r.error && r.status === 0) return candidate;
  }
  throw new Error(
    'nginx is not installed: the reverse-proxy tests need a real nginx (Debian: apt-get install nginx; .ci/run installs it)',
  );
}

async function waitForPort(port: number, child: ChildProcess, log: () => string): Promise<void> {
  const end = Date.now() + scaled(10_000);
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nginx exited ${child.exitCode}: ${log()}`);
    if (Date.now() > end)
      throw new Error(`nginx did not listen on port ${port} within ${scaled(10_000) / 1000} s: ${log()}`);
    const open = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * A real nginx on a free loopback port in front of `upstream`, with nothing but `proxy_pass`: its
 * defaults are what an operator gets, including `proxy_http_version 1.0` towards the upstream and
 * response buffering on.
 */
export async function startNginx(upstream: string): Promise<RunningNginx> {
  const bin = nginxBinary();
  const dir = mkdtempSync(join(tmpdir(), 'fusion-nginx-'));
  for (const d of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(join(dir, d));
  const port = await freePort();
  const conf = `
daemon off;
master_process off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  server {
    listen 127.0.0.1:${port};
    location / { proxy_pass ${upstream}; }
  }
}
`;
  writeFileSync(join(dir, 'nginx.conf'), conf);
  const child = spawn(bin, ['-c', join(dir, 'nginx.conf'), '-p', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout!.on('data', (d: Buffer) => (log += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (log += d.toString()));
  const close = (signal: NodeJS.Signals): Promise<void> =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill(signal);
    });
  try {
    await waitForPort(port, child, () => log);
  } catch (e) {
    await close('SIGKILL');
    throw e;
  }
  return { url: `http://127.0.0.1:${port}`, close: () => close('SIGQUIT') };
}
