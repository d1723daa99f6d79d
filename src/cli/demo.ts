import { parseArgs } from 'node:util';
/**
 * `fusion-proxy demo` (`npm run demo`): everything on one laptop, no Redis, no network.
 *
 *  1. the platform simulator with a generated tenant (identities from an HR source, managed
 *     sources with planted duplicates and machine accounts, one disabled source);
 *  2. the proxy server in embedded mode;
 *  3. test connection through the proxy client, then a full aggregation the way the platform runs
 *     one: the simulator is asked over HTTP to aggregate the connector's source, calls
 *     std:account:list through the proxy URL, creates the accounts and identities, and runs the
 *     provisioning plan's std:account:enable for each new account, also through the proxy;
 *  4. a summary.
 */
import { randomBytes } from 'node:crypto';
import type { AggregationSummary } from '../core/aggregation/aggregation-summary';
import { errorMessage } from '../core/errors';
import { createLogger } from '../observability/logger';
import { proxyItems } from '../proxy-client/proxy-client';
import { createProductionRunner } from '../runtime/production-runner';
import { loadEnv } from '../server/env';
import { startServer } from '../server/server';
import { startSimulator } from '../simulator';
import { connectorConfig } from '../simulator/connector-config';
import type { PlatformAggregationResult } from '../simulator/platform-aggregation';
import { aggregateConnectorSource } from './aggregate';
import { withoutProxyPassword } from '../core/config/proxy-password';

const USAGE = `usage: fusion-proxy demo [--identities N] [--per-source N] [--seed N] [--rps N] [--no-enable]

  --identities N   identities of the generated tenant (default 3000)
  --per-source N   accounts on each managed source (default 1500)
  --seed N         tenant seed (default 42)
  --rps N          "Requests per second" of the connector (default 200; the simulator allows 250/s)
  --no-enable      skip the provisioning plan's std:account:enable of new accounts
`;

interface DemoArgs {
  identities: number;
  perSource: number;
  seed: number;
  rps: number;
  enable: boolean;
}

const NUMBERS = { identities: 'identities', 'per-source': 'perSource', seed: 'seed', rps: 'rps' } as const;

/** The command line through node:util's parser; a message for a bad one. */
function readArgs(argv: string[]): DemoArgs | string {
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({
      args: argv,
      strict: true,
      options: {
        identities: { type: 'string' },
        'per-source': { type: 'string' },
        seed: { type: 'string' },
        rps: { type: 'string' },
        'no-enable': { type: 'boolean' },
      },
    }).values;
  } catch (e) {
    return errorMessage(e);
  }
  const args: DemoArgs = {
    identities: 3000,
    perSource: 1500,
    seed: 42,
    rps: 200,
    enable: values['no-enable'] !== true,
  };
  for (const [flag, key] of Object.entries(NUMBERS)) {
    const given = values[flag];
    if (given === undefined) continue;
    const n = Number(given);
    if (!Number.isInteger(n) || n < 1) return `--${flag} needs a whole number of at least 1, got "${String(given)}"`;
    args[key] = n;
  }
  return args;
}

/**
 * A progress line on stderr: redrawn in place on a terminal; on a pipe or log file, one plain
 * line every few seconds, so CI logs stay readable.
 */
class Progress {
  private last = 0;
  private label = '';
  private n = 0;
  private readonly tty = Boolean(process.stderr.isTTY);
  constructor(private readonly started: number) {}
  update(label: string, n: number, force = false): void {
    const now = Date.now();
    if (label !== this.label) {
      // Close the previous phase with its final count before starting the next one.
      if (this.label) this.write(this.label, this.n, now, true);
      this.label = label;
      force = true;
    }
    this.n = n;
    if (!force && now - this.last < (this.tty ? 100 : 5000)) return;
    this.write(label, n, now, false);
  }
  private write(label: string, n: number, now: number, final: boolean): void {
    this.last = now;
    const text = `${label}: ${n}, ${((now - this.started) / 1000).toFixed(1)} s`;
    if (this.tty) process.stderr.write(`\r${text}   ${final ? '\n' : ''}`);
    else process.stderr.write(`${text}\n`);
  }
  get current(): string {
    return this.label;
  }
  done(): void {
    if (this.tty) process.stderr.write('\n');
  }
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

export async function run(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(USAGE);
    return 0;
  }
  const args = readArgs(argv);
  if (typeof args === 'string') {
    process.stderr.write(`fusion-proxy demo: ${args}\n${USAGE}`);
    return 2;
  }
  const started = Date.now();
  process.stderr.write(
    `Generating a tenant: ${args.identities} identities, ${args.perSource} accounts on each of 2 managed sources, 1 disabled source...\n`,
  );
  const sim = await startSimulator({
    seed: args.seed,
    tenant: { identities: args.identities, accountsPerSource: args.perSource, duplicateRate: 0.1, machineRate: 0.02 },
    rateLimit: { requests: 250, windowMs: 1000 },
    logRequests: false,
  });
  const password = randomBytes(18).toString('base64url');
  const logger = createLogger({ level: 'error', destination: process.stderr });
  const summaries: AggregationSummary[] = [];
  const runner = createProductionRunner({ onAggregationSummary: (s) => summaries.push(s) });
  const env = {
    ...loadEnv({}),
    PORT: 0,
    HOST: '127.0.0.1',
    PROXY_PASSWORD: password,
    LOG_LEVEL: 'error' as const,
    METRICS_ENABLED: false,
  };
  const server = await startServer(env, { runner, logger });
  const proxyUrl = `${server.url}/`;
  const config: Record<string, unknown> = {
    ...connectorConfig(sim.tenant, {
      baseurl: sim.baseurl,
      clientId: sim.clientId,
      clientSecret: sim.clientSecret,
      proxyUrl,
      proxyPassword: password,
      requestsPerSecond: args.rps,
    }),
    // Legacy is configured too, and disabled on the platform: the run skips it with a warning.
    sources: ['Contractors', 'LDAP', 'Legacy'],
  };
  sim.control.setConnectorConfig(withoutProxyPassword(config));
  try {
    process.stderr.write(`Simulator at ${sim.baseurl}; proxy server (embedded mode) at ${proxyUrl}\n`);
    for await (const item of proxyItems({ url: proxyUrl, password, type: 'std:test-connection', input: {}, config })) {
      process.stdout.write(`Test connection: ${String(item.status)}: ${String(item.message)}\n`);
    }
    // The platform's side, over HTTP as in production: the simulator is asked to aggregate the
    // connector's source, and it calls the connector through the proxy URL.
    const aggregationStarted = Date.now();
    const progress = new Progress(aggregationStarted);
    let sent = 0;
    let enables = 0;
    let platform: PlatformAggregationResult | undefined;
    sim.control.playConnector({
      url: proxyUrl,
      password,
      enableNew: args.enable,
      enableConcurrency: 8,
      onItem: (type) => {
        if (type === 'std:account:list') progress.update('Accounts sent by the connector', ++sent);
        else progress.update('New accounts enabled', ++enables);
      },
      onResult: (r) => (platform = r),
    });
    const outcome = await aggregateConnectorSource(config, { pollMs: 200 });
    progress.update(progress.current, progress.current === 'Accounts sent by the connector' ? sent : enables, true);
    progress.done();
    if (outcome.state !== 'SUCCESS' && outcome.state !== 'WARNING') {
      throw new Error(`the aggregation task ended ${outcome.state}: ${outcome.messages.join('; ') || 'no message'}`);
    }
    const s = summaries[0];
    const p = platform;
    const counters = sim.control.counters();
    const truth = new Set(sim.tenant.groundTruth.map((t) => t.accountId));
    const flagged = s?.pendingReviews ?? [];
    const plantedFound = flagged.filter((r) => truth.has(r.accountId)).length;
    const namesakes = flagged.length - plantedFound;
    const review = s?.review as { formsCreated: number; notificationsSent: number; noReviewer: unknown[] } | undefined;
    const read = Object.values(s?.accountsPerSource ?? {}).reduce((a, b) => a + b, 0);
    const lines = [
      '',
      'Summary',
      `  accounts read per source:       ${Object.entries(s?.accountsPerSource ?? {})
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')} (${plural(read, 'account')} read)`,
      `  sources skipped (disabled):     ${(s?.skippedSources ?? []).join(', ') || '-'}`,
      `  machine accounts skipped:       ${s?.machineAccountsSkipped ?? 0}`,
      `  identity baseline:              ${plural(s?.baselineIdentities ?? 0, 'identity', 'identities')}`,
      `  accounts sent to the platform:  ${sent} (${s?.accountsCreated ?? 0} new connector accounts; the platform created ${plural(p?.created ?? 0, 'account')} and ${plural(p?.identitiesCreated ?? 0, 'identity', 'identities')})`,
      `  accounts enabled by the plan:   ${p?.enabled ?? 0}${p?.enableErrors.length ? ` (${p.enableErrors.length} failed)` : ''}`,
      `  potential duplicates:           ${plural(s?.potentialDuplicates ?? 0, 'account')} wait for review (${plantedFound} of ${truth.size} planted duplicates among them)`,
      ...(namesakes > 0
        ? [
            `${' '.repeat(34)}${namesakes === 1 ? 'the other account shares' : `the other ${namesakes} accounts share`} a name and department with an identity`,
            `${' '.repeat(34)}without being a planted duplicate: different people with the same name (namesakes).`,
            `${' '.repeat(34)}Telling them apart is what the review form is for.`,
          ]
        : []),
      `  review forms:                   ${review ? `${review.formsCreated} created on the platform, ${plural(review.notificationsSent, 'notification')} sent${review.noReviewer.length ? `, ${plural(review.noReviewer.length, 'account')} without reviewer` : ''}` : `${flagged.length} pending`}`,
      `  platform API requests:          ${counters.requests} (429 responses: ${counters.rateLimited})`,
      `  aggregation time:               ${(((s?.elapsedMs ?? 0) as number) / 1000).toFixed(1)} s; with enables ${outcome.seconds.toFixed(1)} s; total ${((Date.now() - started) / 1000).toFixed(1)} s`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    return 0;
  } catch (e) {
    process.stderr.write(`\nfusion-proxy demo: ${errorMessage(e)}\n`);
    return 1;
  } finally {
    await server.close();
    await sim.close();
  }
}
