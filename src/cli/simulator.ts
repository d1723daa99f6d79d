import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { errorMessage } from '../core/errors';
import { startSimulator, writeGroundTruth, type SimClient, type SimulatorOptions } from '../simulator';
import { connectorConfig } from '../simulator/connector-config';
import { generateTenant } from '../simulator/tenant-generator';
import { withoutProxyPassword } from '../core/config/proxy-password';

function readConfigFile(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new RangeError(`--config: cannot read ${file}: ${errorMessage(e)}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new RangeError(`--config: ${file} is not valid JSON: ${errorMessage(e)}`);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw new RangeError(`--config: ${file} must hold one JSON object (the connector configuration)`);
  return value as Record<string, unknown>;
}

/**
 * What a configuration file written by this simulator pins: its port (a loopback baseurl) and its
 * client credentials. A restart with `--config` of that file keeps them unless options say otherwise.
 */
function restartOf(config: Record<string, unknown> | undefined): {
  port?: number;
  clientId?: string;
  clientSecret?: string;
} {
  if (!config) return {};
  const out: { port?: number; clientId?: string; clientSecret?: string } = {};
  if (typeof config.clientId === 'string' && typeof config.clientSecret === 'string') {
    out.clientId = config.clientId;
    out.clientSecret = config.clientSecret;
  }
  try {
    const u = new URL(String(config.baseurl));
    if (u.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname) && u.port)
      out.port = Number(u.port);
  } catch {
    // not a URL: the simulator picks a port
  }
  return out;
}

const USAGE = `usage: fusion-proxy simulator [options]

Runs the platform API simulator until SIGINT/SIGTERM. When ready it prints one JSON line on stdout:
  {"baseurl": "...", "clientId": "...", "clientSecret": "...", "fusionSourceId": "...",
   "spConnectorInstanceId": "...", "sources": [...], ...}

With --connector-url it also plays the platform's side of an aggregation: an aggregation of the
connector's source (POST /v3/sources/{id}/load-accounts, e.g. "fusion-proxy aggregate") calls
std:account:list through that URL, creates, updates and removes the source's accounts, creates
identities for new ones and runs std:account:enable for them, all through the URL.

options:
  --host H                  listen address (default 127.0.0.1)
  --port P                  port (default 0 = a free port)
  --seed S                  tenant seed (default 1)
  --identities N            identities, each with an HR account (default 50)
  --accounts-per-source M   accounts per managed source (default 20)
  --duplicates RATE         fraction of managed accounts planted as duplicates (default 0.1)
  --machines RATE           fraction of machine accounts (default 0.02)
  --rps-limit X             rate limit of X requests per second per client; 0 disables
                            (default: the platform's 100 requests per 10 s)
  --token-ttl SECONDS       access token lifetime (default 749)
  --client-id ID            fixed client id (with --client-secret; default: random)
  --client-secret SECRET
  --truth FILE              write the planted duplicates as CSV accountId,candidateId
  --log-requests            keep the per-request log in memory (counters are always kept)
  --write-config FILE       write a complete, working connector configuration for this tenant
                            (mode 600: it holds the client secret and the proxy password)
  --config FILE             use this connector configuration for the connector's source
                            (what the platform sends with each command). The simulator reads it
                            once, at start: to take edits in, restart it with --config. A file it
                            wrote keeps working: its port and client credentials are reused
                            (a fresh tenant, the same ids)
  --connector-url URL       play the platform against the connector's proxy URL (see above)
  --proxy-password P        the proxy password for --connector-url (default: env PROXY_PASSWORD)
`;

/** "Requests per second" for the written configuration: just under the simulator's own limit. */
function configuredRps(limit: { requests: number; windowMs: number } | false | undefined): number {
  const l = limit ?? { requests: 100, windowMs: 10_000 };
  if (l === false) return 100;
  return Math.max(1, Math.floor(((l.requests * 1000) / l.windowMs) * 0.9));
}

function num(
  v: string | undefined,
  name: string,
  fallback: number,
  opts: { int?: boolean; max?: number } = {},
): number {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0 || (opts.int && !Number.isInteger(n)) || (opts.max !== undefined && n > opts.max)) {
    throw new RangeError(
      `--${name} must be a ${opts.int ? 'non-negative integer' : 'non-negative number'}${opts.max !== undefined ? ` up to ${opts.max}` : ''}, got "${v}"`,
    );
  }
  return n;
}

/** `io` lets tests stop the simulator and read its line without signals or a child process. */
export interface SimulatorCliIo {
  signal?: AbortSignal;
  write?: (text: string) => void;
}

export async function run(argv: string[], io: SimulatorCliIo = {}): Promise<number> {
  const write = io.write ?? ((text: string) => void process.stdout.write(text));
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({
      args: argv,
      options: {
        host: { type: 'string' },
        port: { type: 'string' },
        seed: { type: 'string' },
        identities: { type: 'string' },
        'accounts-per-source': { type: 'string' },
        duplicates: { type: 'string' },
        machines: { type: 'string' },
        'rps-limit': { type: 'string' },
        'token-ttl': { type: 'string' },
        'client-id': { type: 'string' },
        'client-secret': { type: 'string' },
        truth: { type: 'string' },
        'log-requests': { type: 'boolean' },
        'write-config': { type: 'string' },
        config: { type: 'string' },
        'connector-url': { type: 'string' },
        'proxy-password': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (e) {
    process.stderr.write(`fusion-proxy simulator: ${errorMessage(e)}\n${USAGE}`);
    return 2;
  }
  if (values['help']) {
    write(USAGE);
    return 0;
  }
  const str = (k: string): string | undefined => values[k] as string | undefined;
  let opts: SimulatorOptions;
  let clientId: string | undefined;
  let clientSecret: string | undefined;
  let connectorUrl: string | undefined;
  let proxyPassword: string | undefined;
  let loadedConfig: Record<string, unknown> | undefined;
  try {
    const rps = str('rps-limit') === undefined ? undefined : num(str('rps-limit'), 'rps-limit', 0);
    const configFile = str('config');
    if (configFile !== undefined) loadedConfig = readConfigFile(configFile);
    // Restarted with the file it wrote (to take edits in): same URL and credentials, so the file stays valid.
    const fromFile = restartOf(loadedConfig);
    clientId = str('client-id') ?? (str('client-secret') === undefined ? fromFile.clientId : undefined);
    clientSecret = str('client-secret') ?? (str('client-id') === undefined ? fromFile.clientSecret : undefined);
    if ((clientId === undefined) !== (clientSecret === undefined))
      throw new RangeError('--client-id and --client-secret go together');
    const clients: SimClient[] =
      clientId && clientSecret ? [{ clientId, clientSecret, scopes: ['sp:scopes:all'] }] : [];
    const tenant = generateTenant({
      seed: num(str('seed'), 'seed', 1, { int: true }),
      identities: num(str('identities'), 'identities', 50, { int: true }),
      accountsPerSource: num(str('accounts-per-source'), 'accounts-per-source', 20, { int: true }),
      duplicateRate: num(str('duplicates'), 'duplicates', 0.1, { max: 1 }),
      machineRate: num(str('machines'), 'machines', 0.02, { max: 1 }),
    });
    opts = {
      host: str('host'),
      port: num(str('port'), 'port', fromFile.port ?? 0, { int: true, max: 65535 }),
      tenant,
      rateLimit: rps === undefined ? undefined : rps === 0 ? false : { requests: rps, windowMs: 1000 },
      tokenTtlSeconds: num(str('token-ttl'), 'token-ttl', 749, { int: true }),
      clients,
      logRequests: values['log-requests'] === true,
    };
    const truth = str('truth');
    if (truth) writeGroundTruth(tenant, truth);
    connectorUrl = str('connector-url');
    if (connectorUrl !== undefined) {
      let u: URL;
      try {
        u = new URL(connectorUrl);
      } catch {
        throw new RangeError(`--connector-url must be a URL such as http://127.0.0.1:8080/, got "${connectorUrl}"`);
      }
      if (u.protocol !== 'http:' && u.protocol !== 'https:')
        throw new RangeError(`--connector-url must be http:// or https://, got "${connectorUrl}"`);
      proxyPassword = str('proxy-password') ?? process.env['PROXY_PASSWORD'];
      if (!proxyPassword) throw new RangeError('--connector-url needs --proxy-password or env PROXY_PASSWORD');
    } else if (str('proxy-password') !== undefined) throw new RangeError('--proxy-password goes with --connector-url');
  } catch (e) {
    process.stderr.write(`fusion-proxy simulator: ${errorMessage(e)}\n`);
    return 2;
  }

  const sim = await startSimulator(opts);
  const t = sim.tenant;
  const config = {
    ...connectorConfig(t, {
      baseurl: sim.baseurl,
      clientId: clientId ?? sim.clientId,
      clientSecret: clientSecret ?? sim.clientSecret,
      proxyUrl: connectorUrl,
      proxyPassword,
      requestsPerSecond: configuredRps(opts.rateLimit),
    }),
    ...(loadedConfig ?? {}),
  };
  // What the platform sends with each command is the source's configuration, without the proxy
  // password (the simulator adds the one it was given when it calls the connector).
  sim.control.setConnectorConfig(withoutProxyPassword(config));
  const writeTo = str('write-config');
  try {
    if (writeTo) writeFileSync(writeTo, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  } catch (e) {
    process.stderr.write(`fusion-proxy simulator: cannot write ${writeTo}: ${errorMessage(e)}\n`);
    await sim.close();
    return 1;
  }
  if (connectorUrl && proxyPassword) sim.control.playConnector({ url: connectorUrl, password: proxyPassword });
  const own = t.source(t.meta.fusionSourceId as string);
  write(
    `${JSON.stringify({
      baseurl: sim.baseurl,
      clientId: clientId ?? sim.clientId,
      clientSecret: clientSecret ?? sim.clientSecret,
      fusionSourceId: t.meta.fusionSourceId,
      fusionSourceName: t.meta.fusionSourceName,
      spConnectorInstanceId: own.connectorAttributes['spConnectorInstanceId'],
      sources: config['sources'],
      identities: t.identities.size,
      accounts: t.accounts.size,
      plantedDuplicates: t.groundTruth.length,
      ...(writeTo ? { configFile: writeTo } : {}),
      ...(connectorUrl ? { connectorUrl } : {}),
    })}\n`,
  );
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      io.signal?.removeEventListener('abort', stop);
      resolve();
    };
    if (io.signal?.aborted) return stop();
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    io.signal?.addEventListener('abort', stop);
  });
  await sim.close();
  return 0;
}
