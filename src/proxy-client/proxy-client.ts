import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import type { CommandType } from '../core/command-types';
import { FusionError, isFusionError } from '../core/errors';
import { silentLogger, type Logger } from '../core/ports/logger';
import { redactText, secretValues } from '../secrets/redaction';
import { displayUrl, networkError, statusError, streamFailedError } from './proxy-errors';
import { ResponseFormatError, ResponseParser } from './response-parser';

/** One item of a command's output, exactly as the proxy server sent it. */
export type ProxyItem = Record<string, unknown>;

export interface ProxyTimeouts {
  /** Longest wait for the TCP connection and, for https, the TLS handshake. */
  connectMs?: number;
  /**
   * Longest silence from the server: waiting for the response headers, and between two chunks
   * of the body. Any byte resets it, so the server's blank-line heartbeats keep a long command
   * alive. Time spent in the caller's onItem callback does not count.
   */
  idleMs?: number;
}

/**
 * connect 30 s; idle 6 min, longer than the server's own 5-minute REQUEST_TIMEOUT_MS default so its clearer error wins.
 */
const DEFAULT_PROXY_TIMEOUTS: Required<ProxyTimeouts> = { connectMs: 30_000, idleMs: 360_000 };

export interface ProxyRequestOptions {
  /** The Proxy URL (http or https); its path is the server's endpoint path. */
  url: string;
  /** The shared secret, sent as config.proxyPassword. Never logged, never in an error message. */
  password: string;
  type: CommandType;
  input: Record<string, unknown>;
  /** The complete connector configuration; forwarded with proxyEnabled forced to false. */
  config: Record<string, unknown>;
  timeouts?: ProxyTimeouts;
  /** Extra trusted CA certificate(s) (PEM) for an https Proxy URL, added to the system roots. */
  ca?: string | Buffer | ReadonlyArray<string | Buffer>;
  signal?: AbortSignal;
  logger?: Logger;
  /** Called for every heartbeat (blank line) the server sends while it has nothing else to say. */
  onHeartbeat?: () => void;
  /** Largest accepted single item in bytes (default 16 MB). */
  maxItemBytes?: number;
}

export interface ProxyResult {
  /** Items handed to the caller. */
  items: number;
  /** Bytes of the response body received. */
  bytes: number;
}

const ERROR_BODY_LIMIT = 64 * 1024;

function positive(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value <= 0)
    throw new FusionError('CONFIG_INVALID', `proxy timeout ${name} must be a positive number of milliseconds`, {
      name,
    });
  return value;
}

function parseProxyUrl(raw: string, secrets: readonly string[]): URL {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new FusionError(
      'CONFIG_INVALID',
      `Proxy URL ${JSON.stringify(redactText(raw, secrets))} is not a valid URL (expected https://host[:port]/path)`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new FusionError(
      'CONFIG_INVALID',
      `Proxy URL ${displayUrl(url)} must use http or https, not ${url.protocol.replace(/:$/, '')}`,
    );
  }
  return url;
}

/** Every string that must never reach a log line or an error message. */
function secretsOf(opts: ProxyRequestOptions): string[] {
  const values: unknown[] = [opts.password, opts.config.clientSecret, opts.config.proxyPassword];
  try {
    const u = new URL(opts.url.trim());
    if (u.password) values.push(decodeURIComponent(u.password));
  } catch {
    // An invalid URL is reported by parseProxyUrl.
  }
  return secretValues(values);
}

/**
 * Sends one command to a proxy server and yields each output item as soon as it is parsed.
 * The generator's return value counts items and bytes. It never yields a partial result as
 * complete: a truncated or aborted body throws (after the items already yielded).
 * Breaking out of the loop early closes the connection.
 */
export async function* proxyItems(opts: ProxyRequestOptions): AsyncGenerator<ProxyItem, ProxyResult, undefined> {
  const secrets = secretsOf(opts);
  const target = parseProxyUrl(opts.url, secrets);
  const shownUrl = displayUrl(target);
  const logger = opts.logger ?? silentLogger;
  const type = opts.type;
  if (typeof opts.password !== 'string' || opts.password.length === 0) {
    throw new FusionError(
      'CONFIG_INVALID',
      `Proxy password is empty: set the Proxy password to the PROXY_PASSWORD of the server at ${shownUrl}`,
      { url: shownUrl },
    );
  }
  const connectMs = positive(opts.timeouts?.connectMs, DEFAULT_PROXY_TIMEOUTS.connectMs, 'connectMs');
  const idleMs = positive(opts.timeouts?.idleMs, DEFAULT_PROXY_TIMEOUTS.idleMs, 'idleMs');
  const errCtx = { url: shownUrl, type, secrets };

  if (opts.signal?.aborted) throw cancelled(shownUrl, type);

  const body = Buffer.from(
    JSON.stringify({
      type,
      input: opts.input,
      config: { ...opts.config, proxyEnabled: false, proxyPassword: opts.password },
    }),
    'utf8',
  );
  const isHttps = target.protocol === 'https:';
  const requestOptions: https.RequestOptions = {
    method: 'POST',
    // A fresh connection per command: no pooled socket can carry a stale TLS or timeout state.
    agent: false,
    headers: {
      'content-type': 'application/json',
      'content-length': String(body.length),
      accept: 'application/x-ndjson, application/json',
      'user-agent': 'fusion-proxy-client',
    },
  };
  if (isHttps && opts.ca !== undefined) {
    const extra = Array.isArray(opts.ca)
      ? [...(opts.ca as ReadonlyArray<string | Buffer>)]
      : [opts.ca as string | Buffer];
    requestOptions.ca = [...(await systemRoots()), ...extra];
  }

  let failure: FusionError | undefined;
  let response: IncomingMessage | undefined;
  let connectTimer: NodeJS.Timeout | undefined;
  let idleTimer: NodeJS.Timeout | undefined;
  const req = (isHttps ? https : http).request(target, requestOptions);

  const fail = (err: FusionError): void => {
    if (!failure) failure = err;
    req.destroy(err);
    response?.destroy(err);
  };
  const armIdle = (): void => {
    clearTimeout(idleTimer);
    idleTimer = setTimeout(() => {
      fail(
        new FusionError(
          'PROXY_TIMEOUT',
          response
            ? `The proxy server at ${shownUrl} sent nothing for ${idleMs} ms while answering ${type} (not even a heartbeat); the result is incomplete and was not accepted.`
            : `The proxy server at ${shownUrl} accepted the connection but did not answer ${type} within ${idleMs} ms. Check that the URL points at the proxy server and read its logs.`,
          { url: shownUrl, command: type, timeout: 'idle', timeoutMs: idleMs },
        ),
      );
    }, idleMs);
  };
  const disarmIdle = (): void => clearTimeout(idleTimer);
  const onAbort = (): void => fail(cancelled(shownUrl, type));

  req.on('socket', (socket: Socket) => {
    connectTimer = setTimeout(() => {
      fail(
        new FusionError(
          'PROXY_TIMEOUT',
          `Cannot connect to the proxy server at ${shownUrl}: no ${isHttps ? 'connection and TLS handshake' : 'connection'} within ${connectMs} ms. Check the address, that the server is running, and the firewall.`,
          { url: shownUrl, command: type, timeout: 'connect', timeoutMs: connectMs },
        ),
      );
    }, connectMs);
    socket.once(isHttps ? 'secureConnect' : 'connect', () => {
      clearTimeout(connectTimer);
      armIdle();
    });
  });
  // Once the request is flushed the wait for headers starts; a large body may take a while to send.
  req.on('finish', () => {
    if (!response && connectTimer !== undefined) armIdle();
  });
  opts.signal?.addEventListener('abort', onAbort, { once: true });

  logger.debug({ url: shownUrl, command: type, requestBytes: body.length }, 'forwarding command to the proxy server');
  let items = 0;
  let bytes = 0;
  try {
    try {
      response = await new Promise<IncomingMessage>((resolve, reject) => {
        req.once('response', resolve);
        req.once('error', reject);
        req.end(body);
      });
    } catch (e) {
      throw failure ?? networkError(e, { ...errCtx, phase: 'connect' });
    }
    // Errors after this point surface through the body iterator; this keeps a late one from being unhandled.
    req.on('error', () => undefined);
    clearTimeout(connectTimer);
    armIdle();

    const res = response;
    const status = res.statusCode ?? 0;
    if (status < 200 || status >= 300) {
      let text: string;
      try {
        text = await readLimited(res, ERROR_BODY_LIMIT, armIdle);
      } catch (e) {
        throw failure ?? networkError(e, { ...errCtx, phase: 'response' });
      }
      throw statusError(status, text, errCtx);
    }

    const parser = new ResponseParser({
      contentType: headerValue(res.headers['content-type']),
      maxItemBytes: opts.maxItemBytes,
    });
    try {
      for await (const chunk of res as AsyncIterable<Buffer>) {
        // The caller's time (and its backpressure) is not the server's silence.
        disarmIdle();
        bytes += chunk.length;
        for (const ev of parser.push(chunk)) {
          if (ev.kind === 'heartbeat') {
            opts.onHeartbeat?.();
          } else if (ev.kind === 'server-error') {
            throw streamFailedError(ev.error, { url: shownUrl, type, secrets, items });
          } else {
            items += 1;
            yield ev.item;
          }
        }
        parser.assertOk();
        armIdle();
      }
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
      if (failure) throw failure;
      if (isFusionError(e)) throw e;
      if (e instanceof ResponseFormatError) {
        const detail = redactText(e.message, secrets);
        if (e.kind === 'truncated') {
          throw new FusionError(
            'PROXY_STREAM_ABORTED',
            `The response of the proxy server at ${shownUrl} to ${type} is truncated: ${detail}. The result is incomplete and was not accepted.`,
            { url: shownUrl, command: type, itemsBeforeFailure: items },
          );
        }
        throw new FusionError(
          'PROXY_BAD_RESPONSE',
          `Failed to parse JSON from the proxy server at ${shownUrl} (${type}): ${detail}. A proxy server must return a JSON array of objects or NDJSON (one object per line).`,
          { url: shownUrl, command: type, itemsBeforeFailure: items },
        );
      }
      throw networkError(e, { ...errCtx, phase: 'response' });
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
    if (items === 0) {
      logger.warn(
        { url: shownUrl, command: type, bytes },
        `the proxy server returned an empty result for ${type}: check the source data and the server logic (an empty answer is accepted as success)`,
      );
    }
    logger.debug({ url: shownUrl, command: type, items, bytes }, 'proxy command finished');
    return { items, bytes };
  } finally {
    clearTimeout(connectTimer);
    disarmIdle();
    opts.signal?.removeEventListener('abort', onAbort);
    // Normal end: nothing left to read. Early exit or error: drop the connection so the server cancels the job.
    if (!response?.complete) response?.destroy();
    req.destroy();
  }
}

/**
 * Sends one command and hands each item to `onItem` as soon as it is parsed, awaiting it
 * before reading further (backpressure: memory stays flat whatever the response size).
 */
export async function invokeProxy(
  opts: ProxyRequestOptions,
  onItem: (item: ProxyItem) => void | Promise<void>,
): Promise<ProxyResult> {
  const it = proxyItems(opts);
  for (;;) {
    const next = await it.next();
    if (next.done) return next.value;
    try {
      await onItem(next.value);
    } catch (e) {
      await it.return({ items: 0, bytes: 0 });
      throw e;
    }
  }
}

function cancelled(url: string, type: string): FusionError {
  return new FusionError('COMMAND_CANCELLED', `The call of ${type} on the proxy server at ${url} was cancelled`, {
    url,
    command: type,
  });
}

/** A body that ends where the connection closes (HTTP/1.0 framing): nothing in it says whether it is complete. */
function closeDelimited(res: IncomingMessage): boolean {
  return (
    res.headers['content-length'] === undefined &&
    !/\bchunked\b/i.test(headerValue(res.headers['transfer-encoding']) ?? '')
  );
}

function headerValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

async function readLimited(res: IncomingMessage, limit: number, onData: () => void): Promise<string> {
  const parts: Buffer[] = [];
  let total = 0;
  for await (const chunk of res as AsyncIterable<Buffer>) {
    onData();
    parts.push(chunk.subarray(0, limit - total));
    total += Math.min(chunk.length, limit - total);
    // Enough to quote the error; the rest is dropped with the connection.
    if (total >= limit) break;
  }
  return Buffer.concat(parts).toString('utf8');
}

let rootsPromise: Promise<string[]> | undefined;
/** Node replaces the default roots when `ca` is given; keep them so a custom CA only adds trust. */
function systemRoots(): Promise<string[]> {
  rootsPromise ??= import('node:tls').then((tls) => [...tls.rootCertificates]);
  return rootsPromise;
}
