/**
 * What a proxy call is before it is sent: the options a caller gives, checked (URL, password, timeouts),
 * the secrets no log line or error may show, the request body and the HTTP(S) request options.
 */
import type https from 'node:https';
import type { CommandType } from '../core/command-types';
import { FusionError } from '../core/errors';
import type { Logger } from '../core/ports/logger';
import { redactText, secretValues, secretsOf } from '../secrets/redaction';
import { displayUrl } from './proxy-errors';

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

/** A checked proxy call, ready to send. */
export interface PreparedRequest {
  target: URL;
  /** The URL as messages show it (no credentials). */
  shownUrl: string;
  isHttps: boolean;
  secrets: string[];
  connectMs: number;
  idleMs: number;
  body: Buffer;
  requestOptions: https.RequestOptions;
}

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

/** The configuration's secrets (the shared rule), the proxy password, and a password written into the URL. */
function requestSecrets(opts: ProxyRequestOptions): string[] {
  const values: unknown[] = [opts.password, ...secretsOf(opts.config)];
  try {
    const u = new URL(opts.url.trim());
    if (u.password) values.push(decodeURIComponent(u.password));
  } catch {
    // An invalid URL is reported by parseProxyUrl.
  }
  return secretValues(values);
}

let rootsPromise: Promise<string[]> | undefined;
/** Node replaces the default roots when `ca` is given; keep them so a custom CA only adds trust. */
function systemRoots(): Promise<string[]> {
  rootsPromise ??= import('node:tls').then((tls) => [...tls.rootCertificates]);
  return rootsPromise;
}

/** Checks the options and builds the request; throws CONFIG_INVALID naming what is wrong. */
export async function prepareRequest(opts: ProxyRequestOptions): Promise<PreparedRequest> {
  const secrets = requestSecrets(opts);
  const target = parseProxyUrl(opts.url, secrets);
  const shownUrl = displayUrl(target);
  if (typeof opts.password !== 'string' || opts.password.length === 0) {
    throw new FusionError(
      'CONFIG_INVALID',
      `Proxy password is empty: set the Proxy password to the PROXY_PASSWORD of the server at ${shownUrl}`,
      { url: shownUrl },
    );
  }
  const connectMs = positive(opts.timeouts?.connectMs, DEFAULT_PROXY_TIMEOUTS.connectMs, 'connectMs');
  const idleMs = positive(opts.timeouts?.idleMs, DEFAULT_PROXY_TIMEOUTS.idleMs, 'idleMs');
  const body = Buffer.from(
    JSON.stringify({
      type: opts.type,
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
  return { target, shownUrl, isHttps, secrets, connectMs, idleMs, body, requestOptions };
}
