/**
 * The notifications a run still owes, kept where state that must survive lives: the connector's own
 * source (connectorAttributes, like the counters and the processing flag). A run writes it BEFORE it
 * creates or renews any form, and removes a reviewer from it right after that reviewer's message was
 * sent, so a worker killed between the two (or a notification workflow that failed) leaves the entry
 * behind and the next run sends it. The one window left: killed after the platform accepted a
 * message and before the removal was saved, that reviewer gets the message twice (never none).
 */
import type { CallOptions, PlatformPort } from '../ports/platform';

export const OUTBOX_KEY = 'fusionReviewOutbox';

/** Reviewer identity id -> the source account ids whose forms the reviewer still has to be told about. */
export type Outbox = Map<string, Set<string>>;

export interface OutboxStore {
  read(): Promise<Outbox>;
  write(outbox: Outbox): Promise<void>;
}

/** The saved value; malformed entries are dropped (a lost entry costs one message, a bad one every run). */
export function parseOutbox(raw: unknown): Outbox {
  const out: Outbox = new Map();
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return out;
  for (const [reviewer, ids] of Object.entries(raw as Record<string, unknown>)) {
    if (!Array.isArray(ids)) continue;
    const set = new Set(ids.filter((x): x is string => typeof x === 'string' && x !== ''));
    if (set.size) out.set(reviewer, set);
  }
  return out;
}

function outboxValue(outbox: Outbox): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [reviewer, ids] of outbox) if (ids.size) out[reviewer] = [...ids].sort();
  return out;
}

export function addToOutbox(outbox: Outbox, reviewerIds: readonly string[], accountId: string): void {
  for (const r of reviewerIds) {
    let set = outbox.get(r);
    if (!set) outbox.set(r, (set = new Set()));
    set.add(accountId);
  }
}

/** The outbox on the connector's own source. */
export function sourceOutbox(
  platform: Pick<PlatformPort, 'getSource' | 'patchSourceConnectorAttributes'>,
  sourceId: string,
  opts: CallOptions,
): OutboxStore {
  return {
    read: async () => parseOutbox((await platform.getSource(sourceId, opts)).connectorAttributes[OUTBOX_KEY]),
    write: (outbox) => platform.patchSourceConnectorAttributes(sourceId, { [OUTBOX_KEY]: outboxValue(outbox) }, opts),
  };
}
