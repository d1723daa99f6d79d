import type { InvokeFn } from './platform-aggregation';

export interface HttpConnectorOptions {
  /** The connector's proxy URL (the proxy server's endpoint). */
  url: string;
  password: string;
  /** The source's configuration at the time of each command (the platform sends the current one). */
  config: () => Record<string, unknown>;
  /** Each output object as it arrives, by command type (progress reports). */
  onItem?: (type: string) => void;
}

/** A command failed on the connector's side; the message is the connector's. */
class ConnectorCommandError extends Error {
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
    this.name = 'ConnectorCommandError';
  }
}

function errorBody(text: string): { error?: string; code?: string } {
  try {
    const body = JSON.parse(text) as unknown;
    if (body && typeof body === 'object') {
      const b = body as Record<string, unknown>;
      return {
        error: typeof b['error'] === 'string' ? b['error'] : undefined,
        code: typeof b['code'] === 'string' ? b['code'] : undefined,
      };
    }
  } catch {
    // not JSON: the raw text is the message
  }
  return { error: text.slice(0, 500) };
}

/**
 * The platform's side of a command in proxy mode, written from the wire contract alone (the
 * simulator shares no code with the connector): POST `{type, input, config}` with the proxy
 * password in the configuration, read NDJSON objects as they arrive (blank lines are heartbeats),
 * fail on an error status, on the server's reason line or on a body cut short.
 */
export function httpConnectorInvoker(opts: HttpConnectorOptions): InvokeFn {
  return async function* invoke(type, input) {
    let res: Response;
    try {
      res = await fetch(opts.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/x-ndjson' },
        body: JSON.stringify({ type, input, config: { ...opts.config(), proxyPassword: opts.password } }),
      });
    } catch (e) {
      const cause = (e as { cause?: { code?: string } }).cause?.code;
      throw new ConnectorCommandError(
        `cannot reach the connector at ${opts.url}${cause ? ` (${cause})` : ''}: is the proxy server running there?`,
      );
    }
    if (!res.ok) {
      const body = errorBody(await res.text());
      throw new ConnectorCommandError(
        `${type} failed at ${opts.url} (HTTP ${res.status})${body.code ? ` [${body.code}]` : ''}: ${body.error ?? 'no message'}`,
        body.code,
      );
    }
    if (!res.body) throw new ConnectorCommandError(`${type}: the connector answered without a body`);
    const decoder = new TextDecoder();
    let buffered = '';
    const lines = function* (final: boolean): Generator<string> {
      let nl = buffered.indexOf('\n');
      while (nl >= 0) {
        yield buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        nl = buffered.indexOf('\n');
      }
      if (final && buffered.trim() !== '') {
        yield buffered;
        buffered = '';
      }
    };
    const parse = (line: string): Record<string, unknown> | undefined => {
      const text = line.trim();
      if (text === '') return undefined;
      if (text.startsWith('#fusion-error ')) {
        const body = errorBody(text.slice('#fusion-error '.length));
        throw new ConnectorCommandError(
          `${type} failed at ${opts.url} after output had started${body.code ? ` [${body.code}]` : ''}: ${body.error ?? 'no message'}`,
          body.code,
        );
      }
      let item: unknown;
      try {
        item = JSON.parse(text);
      } catch {
        throw new ConnectorCommandError(`${type}: the connector sent a line that is not JSON: ${text.slice(0, 80)}`);
      }
      if (!item || typeof item !== 'object' || Array.isArray(item))
        throw new ConnectorCommandError(`${type}: the connector sent a line that is not a JSON object`);
      return item as Record<string, unknown>;
    };
    try {
      for await (const chunk of res.body) {
        buffered += decoder.decode(chunk as Uint8Array, { stream: true });
        for (const line of lines(false)) {
          const item = parse(line);
          if (item) {
            opts.onItem?.(type);
            yield item;
          }
        }
      }
    } catch (e) {
      if (e instanceof ConnectorCommandError) throw e;
      throw new ConnectorCommandError(
        `${type}: the answer from ${opts.url} was cut short (${e instanceof Error ? e.message : String(e)}); nothing of it is taken as complete`,
      );
    }
    buffered += decoder.decode();
    for (const line of lines(true)) {
      const item = parse(line);
      if (item) {
        opts.onItem?.(type);
        yield item;
      }
    }
  };
}
