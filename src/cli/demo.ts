/**
 * `fusion-proxy demo` (`npm run demo`): everything on one laptop, no Redis, no network.
 *
 *  1. the platform simulator with a generated tenant (identities from an HR source, managed
 *     sources with planted duplicates and machine accounts, one disabled source);
 *  2. the proxy server in embedded mode;
 *  3. test connection and a full aggregation through the proxy client, with the simulator
 *     playing the platform's side (it creates the accounts and identities and runs the
 *     provisioning plan's std:account:enable for each new account, also through the proxy);
 *  4. a summary.
 */
import { randomBytes } from 'node:crypto';
import type { AggregationSummary } from '../core/aggregation/aggregation-summary';
import type { CommandType } from '../core/command-types';
import { errorMessage } from '../core/errors';
import { createLogger } from '../observability/logger';
import { proxyItems } from '../proxy-client/proxy-client';
import { createProductionRunner } from '../runtime/production-runner';
import { loadEnv } from '../server/env';
import { startServer } from '../server/server';
import { startSimulator } from '../simulator';
import { runPlatformAggregation } from '../simulator/platform-aggregation';

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

function parseArgs(argv: string[]): DemoArgs | string {
  const args: DemoArgs = { identities: 3000, perSource: 1500, seed: 42, rps: 200, enable: true };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a === '--no-enable') {
      args.enable = false;
      continue;
    }
    const key = { '--identities': 'identities', '--per-source': 'perSource', '--seed': 'seed', '--rps': 'rps' }[a] as
      keyof DemoArgs | undefined;
    const n = Number(argv[i + 1]);
    if (!key || !Number.isInteger(n) || n < 1) return `unexpected argument ${a}${key ? ` ${String(argv[i + 1])}` : ''}`;
    (args as unknown as Record<string, number>)[key] = n;
    i++;
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
    const text = `${label}: ${n} items, ${((now - this.started) / 1000).toFixed(1)} s`;
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

export async function run(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(USAGE);
    return 0;
  }
  const args = parseArgs(argv);
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
  const fusion = sim.tenant.source(sim.tenant.meta.fusionSourceId as string);
  const config: Record<string, unknown> = {
    baseurl: sim.baseurl,
    clientId: sim.clientId,
    clientSecret: sim.clientSecret,
    spConnectorInstanceId: fusion.connectorAttributes.spConnectorInstanceId,
    sources: ['Contractors', 'LDAP', 'Legacy'],
    requestsPerSecond: args.rps,
    maxConcurrentRequests: 10,
    batchSize: 250,
    attributeDefinitions: [
      {
        name: 'login',
        expression: '$firstName.substring(0,1)$lastName',
        type: 'unique',
        case: 'lower',
        normalize: true,
        spaces: true,
        maxLength: 20,
      },
      { name: 'employeeId', expression: 'F$counter', type: 'counter', digits: 6 },
    ],
    matching: {
      attributes: [
        { attribute: 'displayName', algorithm: 'name-matcher', threshold: 88, mandatory: true },
        { attribute: 'department', algorithm: 'exact', threshold: 100, mandatory: true },
      ],
      reviewTopK: 5,
    },
  };
  const invoke = (type: string, input: Record<string, unknown>) =>
    proxyItems({ url: proxyUrl, password, type: type as CommandType, input, config });
  try {
    process.stderr.write(`Simulator at ${sim.baseurl}; proxy server (embedded mode) at ${proxyUrl}\n`);
    for await (const item of invoke('std:test-connection', {})) {
      process.stdout.write(`Test connection: ${String(item.status)}: ${String(item.message)}\n`);
    }
    const aggregationStarted = Date.now();
    const progress = new Progress(aggregationStarted);
    let received = 0;
    let enables = 0;
    const counted = (type: string, input: Record<string, unknown>) =>
      (async function* () {
        for await (const item of invoke(type, input)) {
          if (type === 'std:account:list') progress.update('Aggregating', ++received);
          else progress.update('Enabling new accounts', ++enables);
          yield item;
        }
      })();
    const platform = await runPlatformAggregation({
      tenant: sim.tenant,
      invoke: counted,
      enableNew: args.enable,
      enableConcurrency: 8,
    });
    progress.update(progress.current, progress.current === 'Aggregating' ? received : enables, true);
    progress.done();
    const s = summaries[0];
    const counters = sim.control.counters();
    const truth = new Set(sim.tenant.groundTruth.map((t) => t.accountId));
    const flagged = s?.pendingReviews ?? [];
    const plantedFound = flagged.filter((r) => truth.has(r.accountId)).length;
    const review = s?.review as { formsCreated: number; notificationsSent: number; noReviewer: unknown[] } | undefined;
    const lines = [
      '',
      'Summary',
      `  accounts read per source:     ${Object.entries(s?.accountsPerSource ?? {})
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}`,
      `  sources skipped (disabled):   ${(s?.skippedSources ?? []).join(', ') || '-'}`,
      `  machine accounts skipped:     ${s?.machineAccountsSkipped ?? 0}`,
      `  identity baseline:            ${s?.baselineIdentities ?? 0} identities`,
      `  connector accounts created:   ${s?.accountsCreated ?? 0} (platform: ${platform.created} accounts, ${platform.identitiesCreated} identities)`,
      `  accounts enabled by the plan: ${platform.enabled}${platform.enableErrors.length ? ` (${platform.enableErrors.length} failed)` : ''}`,
      `  potential duplicates:         ${s?.potentialDuplicates ?? 0} accounts wait for review (${plantedFound} of ${truth.size} planted duplicates among them)`,
      `  review forms:                 ${review ? `${review.formsCreated} created on the platform, ${review.notificationsSent} notifications sent${review.noReviewer.length ? `, ${review.noReviewer.length} accounts without reviewer` : ''}` : `${flagged.length} pending`}`,
      `  platform API requests:        ${counters.requests} (429 responses: ${counters.rateLimited})`,
      `  aggregation time:             ${(((s?.elapsedMs ?? 0) as number) / 1000).toFixed(1)} s; with enables ${((Date.now() - aggregationStarted) / 1000).toFixed(1)} s; total ${((Date.now() - started) / 1000).toFixed(1)} s`,
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
