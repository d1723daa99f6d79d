/**
 * The body of a proxy server's answer, read as items: NDJSON or a JSON array, heartbeats passed on, and
 * every way the body can fail (a server error line, a truncated or malformed body, a dropped connection,
 * an HTTP/1.0 body that cannot be told complete) turned into a FusionError that names the server.
 */
import type { IncomingMessage } from 'node:http';
import { FusionError, isFusionError } from '../core/errors';
import { redactText } from '../secrets/redaction';
import { networkError, streamFailedError } from './proxy-errors';
import type { RequestTimers } from './request-timers';
import { ResponseFormatError, ResponseParser } from './response-parser';

/** One item of a command's output, exactly as the proxy server sent it. */
export type ProxyItem = Record<string, unknown>;

export interface ProxyResult {
  /** Items handed to the caller. */
  items: number;
  /** Bytes of the response body received. */
  bytes: number;
}

export interface ReadContext {
  shownUrl: string;
  type: string;
  secrets: string[];
  timers: RequestTimers;
  /** The failure a timer or an abort recorded first: it explains a broken body better than the socket's error. */
  failure: () => FusionError | undefined;
  onHeartbeat?: () => void;
  maxItemBytes?: number;
}

function headerValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/** A body that ends where the connection closes (HTTP/1.0 framing): nothing in it says whether it is complete. */
function closeDelimited(res: IncomingMessage): boolean {
  return (
    res.headers['content-length'] === undefined &&
    !/\bchunked\b/i.test(headerValue(res.headers['transfer-encoding']) ?? '')
  );
}

/** The first `limit` bytes of an error body: enough to quote; the rest is dropped with the connection. */
export async function readLimited(res: IncomingMessage, limit: number, onData: () => void): Promise<string> {
  const parts: Buffer[] = [];
  let total = 0;
  for await (const chunk of res as AsyncIterable<Buffer>) {
    onData();
    parts.push(chunk.subarray(0, limit - total));
    total += Math.min(chunk.length, limit - total);
    if (total >= limit) break;
  }
  return Buffer.concat(parts).toString('utf8');
}

function formatError(e: ResponseFormatError, c: ReadContext, items: number): FusionError {
  const detail = redactText(e.message, c.secrets);
  if (e.kind === 'truncated') {
    return new FusionError(
      'PROXY_STREAM_ABORTED',
      `The response of the proxy server at ${c.shownUrl} to ${c.type} is truncated: ${detail}. The result is incomplete and was not accepted.`,
      { url: c.shownUrl, command: c.type, itemsBeforeFailure: items },
    );
  }
  return new FusionError(
    'PROXY_BAD_RESPONSE',
    `Failed to parse JSON from the proxy server at ${c.shownUrl} (${c.type}): ${detail}. A proxy server must return a JSON array of objects or NDJSON (one object per line).`,
    { url: c.shownUrl, command: c.type, itemsBeforeFailure: items },
  );
}

/** Yields each item as soon as it is parsed; returns the counts once the body is complete. */
export async function* responseItems(
  res: IncomingMessage,
  c: ReadContext,
): AsyncGenerator<ProxyItem, ProxyResult, undefined> {
  const { shownUrl, type, secrets, timers } = c;
  const parser = new ResponseParser({
    contentType: headerValue(res.headers['content-type']),
    maxItemBytes: c.maxItemBytes,
  });
  let items = 0;
  let bytes = 0;
  try {
    for await (const chunk of res as AsyncIterable<Buffer>) {
      // The caller's time (and its backpressure) is not the server's silence.
      timers.disarmIdle();
      bytes += chunk.length;
      for (const ev of parser.push(chunk)) {
        if (ev.kind === 'heartbeat') {
          c.onHeartbeat?.();
        } else if (ev.kind === 'server-error') {
          throw streamFailedError(ev.error, { url: shownUrl, type, secrets, items });
        } else {
          items += 1;
          yield ev.item;
        }
      }
      parser.assertOk();
      timers.armIdle();
    }
    const failure = c.failure();
    if (failure) throw failure;
    if (!res.complete) {
      throw new FusionError(
        'PROXY_STREAM_ABORTED',
        `The proxy server at ${shownUrl} closed the connection before the response to ${type} was complete; the result is incomplete and was not accepted. Read the server logs.`,
        { url: shownUrl, command: type },
      );
    }
    for (const ev of parser.end()) {
      if (ev.kind === 'item') {
        items += 1;
        yield ev.item;
      }
    }
  } catch (e) {
    const failure = c.failure();
    if (failure) throw failure;
    if (isFusionError(e)) throw e;
    if (e instanceof ResponseFormatError) throw formatError(e, c, items);
    throw networkError(e, { url: shownUrl, type, secrets, phase: 'response' });
  }

  if (items === 0 && type === 'std:account:list' && closeDelimited(res)) {
    // No length and no chunks: the body ended where the connection closed. A hop that turned the
    // server's reset into a clean close would look exactly like this, and an empty account list
    // taken as complete makes the platform delete every account of the source.
    throw new FusionError(
      'PROXY_STREAM_ABORTED',
      `The proxy server at ${shownUrl} (or a hop in front of it) answered ${type} with no accounts in a response without length or chunks (HTTP/1.0 framing), which cannot be told from one that was broken off; it was not accepted. Speak HTTP/1.1 end to end (nginx: proxy_http_version 1.1).`,
      { url: shownUrl, command: type, httpVersion: res.httpVersion },
    );
  }
  return { items, bytes };
}
