import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { FusionError } from '../core/errors';
import { silentLogger } from '../core/ports/logger';
import { networkError, statusError } from './proxy-errors';
import { prepareRequest, type ProxyRequestOptions } from './proxy-request';
import { RequestTimers } from './request-timers';
import { readLimited, responseItems, type ProxyItem, type ProxyResult } from './response-items';

export type { ProxyRequestOptions, ProxyTimeouts } from './proxy-request';
export type { ProxyItem, ProxyResult } from './response-items';

const ERROR_BODY_LIMIT = 64 * 1024;

function cancelled(url: string, type: string): FusionError {
  return new FusionError('COMMAND_CANCELLED', `The call of ${type} on the proxy server at ${url} was cancelled`, {
    url,
    command: type,
  });
}

/**
 * Sends one command to a proxy server and yields each output item as soon as it is parsed.
 * The generator's return value counts items and bytes. It never yields a partial result as
 * complete: a truncated or aborted body throws (after the items already yielded).
 * Breaking out of the loop early closes the connection.
 */
export async function* proxyItems(opts: ProxyRequestOptions): AsyncGenerator<ProxyItem, ProxyResult, undefined> {
  const p = await prepareRequest(opts);
  const { shownUrl, secrets } = p;
  const logger = opts.logger ?? silentLogger;
  const type = opts.type;
  if (opts.signal?.aborted) throw cancelled(shownUrl, type);

  let failure: FusionError | undefined;
  const req = (p.isHttps ? https : http).request(p.target, p.requestOptions);
  const timers = new RequestTimers({
    shownUrl,
    type,
    isHttps: p.isHttps,
    connectMs: p.connectMs,
    idleMs: p.idleMs,
    fail,
  });
  function fail(err: FusionError): void {
    if (!failure) failure = err;
    req.destroy(err);
    timers.response?.destroy(err);
  }
  const onAbort = (): void => fail(cancelled(shownUrl, type));
  timers.watch(req);
  opts.signal?.addEventListener('abort', onAbort, { once: true });

  logger.debug({ url: shownUrl, command: type, requestBytes: p.body.length }, 'forwarding command to the proxy server');
  let response: IncomingMessage | undefined;
  try {
    try {
      response = await new Promise<IncomingMessage>((resolve, reject) => {
        req.once('response', resolve);
        req.once('error', reject);
        req.end(p.body);
      });
    } catch (e) {
      throw failure ?? networkError(e, { url: shownUrl, type, secrets, phase: 'connect' });
    }
    // Errors after this point surface through the body iterator; this keeps a late one from being unhandled.
    req.on('error', () => undefined);
    timers.responded(response);

    const status = response.statusCode ?? 0;
    if (status < 200 || status >= 300) {
      let text: string;
      try {
        text = await readLimited(response, ERROR_BODY_LIMIT, () => timers.armIdle());
      } catch (e) {
        throw failure ?? networkError(e, { url: shownUrl, type, secrets, phase: 'response' });
      }
      throw statusError(status, text, { url: shownUrl, type, secrets });
    }

    const result = yield* responseItems(response, {
      shownUrl,
      type,
      secrets,
      timers,
      failure: () => failure,
      onHeartbeat: opts.onHeartbeat,
      maxItemBytes: opts.maxItemBytes,
    });
    if (result.items === 0) {
      logger.warn(
        { url: shownUrl, command: type, bytes: result.bytes },
        `the proxy server returned an empty result for ${type}: check the source data and the server logic (an empty answer is accepted as success)`,
      );
    }
    logger.debug({ url: shownUrl, command: type, ...result }, 'proxy command finished');
    return result;
  } finally {
    timers.stop();
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
