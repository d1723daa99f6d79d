import { parseArgs } from 'node:util';
import { errorMessage } from '../core/errors';
import { startSimulator, writeGroundTruth, type SimClient, type SimulatorOptions } from '../simulator';
import { generateTenant } from '../simulator/tenant-generator';

const USAGE = `usage: fusion-proxy simulator [options]

Runs the platform API simulator until SIGINT/SIGTERM. When ready it prints one JSON line on stdout:
  {"baseurl": "...", "clientId": "...", "clientSecret": "...", "fusionSourceId": "...", ...}

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
`;

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
  try {
    const rps = str('rps-limit') === undefined ? undefined : num(str('rps-limit'), 'rps-limit', 0);
    clientId = str('client-id');
    clientSecret = str('client-secret');
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
      port: num(str('port'), 'port', 0, { int: true, max: 65535 }),
      tenant,
      rateLimit: rps === undefined ? undefined : rps === 0 ? false : { requests: rps, windowMs: 1000 },
      tokenTtlSeconds: num(str('token-ttl'), 'token-ttl', 749, { int: true }),
      clients,
      logRequests: values['log-requests'] === true,
    };
    const truth = str('truth');
    if (truth) writeGroundTruth(tenant, truth);
  } catch (e) {
    process.stderr.write(`fusion-proxy simulator: ${errorMessage(e)}\n`);
    return 2;
  }

  const sim = await startSimulator(opts);
  const t = sim.tenant;
  write(
    `${JSON.stringify({
      baseurl: sim.baseurl,
      clientId: clientId ?? sim.clientId,
      clientSecret: clientSecret ?? sim.clientSecret,
      fusionSourceId: t.meta.fusionSourceId,
      fusionSourceName: t.meta.fusionSourceName,
      identities: t.identities.size,
      accounts: t.accounts.size,
      plantedDuplicates: t.groundTruth.length,
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
