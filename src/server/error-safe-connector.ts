import type { ErrorEmitter } from 'ioredis/built/connectors/AbstractConnector';
import StandaloneConnector, { type StandaloneConnectionOptions } from 'ioredis/built/connectors/StandaloneConnector';
import type { NetStream } from 'ioredis/built/types';

/**
 * ioredis listens for a socket's errors with `once`, so a socket that fails twice crashes the
 * process. A TLS handshake against a CA that did not sign the server does exactly that under load:
 * the certificate error, then the server's "decode error" alert. The first error is what ioredis
 * reports (and RedisHealth logs); this keeps a listener on the socket for any later one, which adds
 * nothing the operator needs.
 */
export class ErrorSafeConnector extends StandaloneConnector {
  // ioredis hands every connector its whole options object; the standalone part is what this one reads.
  constructor(options: unknown) {
    super(options as StandaloneConnectionOptions);
  }

  override async connect(emit: ErrorEmitter): Promise<NetStream> {
    const stream = await super.connect(emit);
    stream.on('error', () => undefined);
    return stream;
  }
}
