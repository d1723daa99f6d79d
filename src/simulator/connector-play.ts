import type { SimContext } from './context';
import { httpConnectorInvoker } from './connector-invoker';
import { runPlatformAggregation, type PlatformAggregationResult } from './platform-aggregation';

export interface PlayConnectorOptions {
  /** The connector's proxy URL. */
  url: string;
  password: string;
  /** Run the identity profile's enable for new accounts (default true). */
  enableNew?: boolean;
  /** Concurrent std:account:enable calls (default 4). */
  enableConcurrency?: number;
  /** Each output object as it arrives, by command type. */
  onItem?: (type: string) => void;
  /** Each finished aggregation's result. */
  onResult?: (result: PlatformAggregationResult) => void;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** One line for the task's messages: what the platform did with the connector's output. */
function describeResult(r: PlatformAggregationResult): string {
  return [
    `${plural(r.created + r.updated + r.unchanged, 'account')} received`,
    `${r.created} created, ${r.updated} updated, ${r.unchanged} unchanged, ${r.removed} removed`,
    `${plural(r.identitiesCreated, 'identity')} created`.replace('identitys', 'identities'),
    `${r.enabled} enabled${r.enableErrors.length ? ` (${r.enableErrors.length} failed)` : ''}`,
  ].join('; ');
}

/**
 * Makes the simulator play the platform against a connector over HTTP: an aggregation task of the
 * connector's source (POST /v3/sources/{id}/load-accounts) runs std:account:list through the URL
 * while the task is open, ingests the result (accounts created, updated and removed, new
 * identities), then runs the provisioning plan's std:account:enable for new disabled accounts.
 * The configuration sent with each command is the source's, as the platform sends it.
 */
export function playConnector(ctx: SimContext, opts: PlayConnectorOptions): void {
  const sourceId = ctx.tenant.meta.fusionSourceId;
  if (!sourceId) throw new Error('the simulated tenant has no connector source');
  const invoke = httpConnectorInvoker({
    url: opts.url,
    password: opts.password,
    config: () => ({ ...ctx.tenant.source(sourceId).connectorAttributes }),
    onItem: opts.onItem,
  });
  ctx.playAggregation = (id) => {
    if (id !== sourceId) return undefined;
    return runPlatformAggregation({
      tenant: ctx.tenant,
      invoke,
      sourceId,
      enableNew: opts.enableNew,
      enableConcurrency: opts.enableConcurrency,
    }).then((result) => {
      opts.onResult?.(result);
      return describeResult(result);
    });
  };
}
