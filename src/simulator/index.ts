import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { AuthService, type SimClient } from './auth';
import type { SimContext } from './context';
import { createControl, type SimulatorControl } from './control';
import { FaultInjector } from './faults';
import { ListCache, SearchCursors } from './paging';
import { RateLimiter } from './rate-limit';
import { RequestLog } from './request-log';
import { allRoutes } from './routes';
import { buildServer } from './server';
import { Tenant } from './store';
import { generateTenant, type TenantSpec } from './tenant-generator';

export type { SimClient } from './auth';
export type { SimulatorControl } from './control';
export type { RequestLogEntry, SimulatorCounters } from './request-log';
export { Tenant } from './store';
export { generateTenant, writeGroundTruth, type TenantSpec } from './tenant-generator';
export { runPlatformAggregation, attachConnectorAggregation, type InvokeFn } from './platform-aggregation';
export interface SimulatorOptions {
  host?: string;
  /** 0 (default) picks a free port. */
  port?: number;
  /** Seed of the generated tenant (when `tenant` is a spec without its own seed). */
  seed?: number;
  tenant?: TenantSpec | Tenant;
  /** Default 100 requests per 10 s per client id; false disables it. */
  rateLimit?: { requests: number; windowMs: number } | false;
  /** Extra clients; a default client with sp:scopes:all is always created. */
  clients?: SimClient[];
  tokenTtlSeconds?: number;
  /** Keep request log entries (counters are always kept). Default true. */
  logRequests?: boolean;
}

export interface RunningSimulator {
  baseurl: string;
  clientId: string;
  clientSecret: string;
  control: SimulatorControl;
  tenant: Tenant;
  close(): Promise<void>;
}

export async function startSimulator(opts: SimulatorOptions = {}): Promise<RunningSimulator> {
  const tenant =
    opts.tenant instanceof Tenant ? opts.tenant : generateTenant({ seed: opts.seed, ...(opts.tenant ?? {}) });
  const clientId = `sim-${randomBytes(8).toString('hex')}`;
  const clientSecret = randomBytes(24).toString('hex');
  const auth = new AuthService(
    [{ clientId, clientSecret, scopes: ['sp:scopes:all'] }, ...(opts.clients ?? [])],
    opts.tokenTtlSeconds ?? 749,
  );
  const ctx: SimContext = {
    tenant,
    auth,
    limiter: new RateLimiter(opts.rateLimit === undefined ? { requests: 100, windowMs: 10_000 } : opts.rateLimit),
    faults: new FaultInjector(),
    log: new RequestLog(opts.logRequests ?? true),
    cache: new ListCache(),
    cursors: new SearchCursors(),
    aggregationOutcomes: new Map(),
    baseurl: '',
  };
  const app = buildServer(ctx, allRoutes(ctx));
  await app.listen({ host: opts.host ?? '127.0.0.1', port: opts.port ?? 0 });
  const addr = app.server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  ctx.baseurl = `http://${host}:${addr.port}`;
  return {
    baseurl: ctx.baseurl,
    clientId,
    clientSecret,
    control: createControl(ctx),
    tenant,
    close: async () => {
      await app.close();
    },
  };
}
