/**
 * Accounts a run must keep for later (connector accounts until their source accounts are read,
 * source accounts until the rest of their connector account's are, a full probabilistic run's new
 * accounts until every source is read) are kept as JSON text: one string of about the account's
 * JSON size instead of an object graph 3-4 times larger (bench:aggregation-memory). The platform
 * sends them as JSON, so the text reads back as the same values (a -0 reads back as 0, which the
 * command's JSON output writes as 0 anyway).
 */
import type { PlatformAccount } from '../ports/platform';

declare const packed: unique symbol;

/** JSON text of a value of type T. */
export type Packed<T> = string & { readonly [packed]: T };

export function pack<T>(value: T): Packed<T> {
  return JSON.stringify(value) as Packed<T>;
}

export function unpack<T>(text: Packed<T>): T {
  return JSON.parse(text) as T;
}

export type PackedAccount = Packed<PlatformAccount>;
