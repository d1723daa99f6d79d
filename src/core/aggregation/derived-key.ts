/**
 * Connector keys of new accounts, derived from the run and the source account (RFC 9562 name-based
 * UUIDs, version 5, in a namespace drawn at random per run) instead of drawn one by one. Whoever
 * decides a run's accounts then names them alike: a partition that matches its accounts alone gives
 * the accounts it creates the keys the run will emit, so later accounts see the same candidate ids,
 * and a partition retried after a lost worker gives the same ones again. A fresh namespace per run
 * keeps keys unguessable before the run and new after "Reset accounts?", as random keys were.
 */
import { createHash, randomUUID } from 'node:crypto';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export class DerivedKeys {
  private readonly namespace: Buffer;

  /** `namespace`: a UUID, drawn at random per run unless given (a retried partition gets its run's). */
  constructor(readonly namespaceId: string = randomUUID()) {
    if (!UUID.test(namespaceId)) throw new RangeError(`Derived keys need a UUID namespace, not ${namespaceId}`);
    this.namespace = Buffer.from(namespaceId.replaceAll('-', ''), 'hex');
  }

  /** The connector key of the account created from this source account in this run. */
  keyOf(accountId: string): string {
    const h = createHash('sha1').update(this.namespace).update(accountId, 'utf8').digest();
    h[6] = (h[6]! & 0x0f) | 0x50;
    h[8] = (h[8]! & 0x3f) | 0x80;
    const x = h.toString('hex', 0, 16);
    return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
  }
}
