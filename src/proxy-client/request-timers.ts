/**
 * The two clocks of a proxy call. Connect: from the socket to the connection (and TLS handshake).
 * Idle: the server's silence, waiting for the headers and then between two chunks of the body; the
 * caller's own time with an item does not count, so the reader disarms it while the caller works.
 */
import type { ClientRequest, IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { FusionError } from '../core/errors';

export class RequestTimers {
  private connectTimer: NodeJS.Timeout | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  /** Set once the headers arrived: the idle message then speaks of a stalled body. */
  response: IncomingMessage | undefined;

  constructor(
    private readonly c: {
      shownUrl: string;
      type: string;
      isHttps: boolean;
      connectMs: number;
      idleMs: number;
      fail: (err: FusionError) => void;
    },
  ) {}

  /** Starts the connect clock on the request's socket, and the idle clock once the request is sent. */
  watch(req: ClientRequest): void {
    const { shownUrl, type, isHttps, connectMs } = this.c;
    req.on('socket', (socket: Socket) => {
      this.connectTimer = setTimeout(() => {
        this.c.fail(
          new FusionError(
            'PROXY_TIMEOUT',
            `Cannot connect to the proxy server at ${shownUrl}: no ${isHttps ? 'connection and TLS handshake' : 'connection'} within ${connectMs} ms. Check the address, that the server is running, and the firewall.`,
            { url: shownUrl, command: type, timeout: 'connect', timeoutMs: connectMs },
          ),
        );
      }, connectMs);
      socket.once(isHttps ? 'secureConnect' : 'connect', () => {
        clearTimeout(this.connectTimer);
        this.armIdle();
      });
    });
    // Once the request is flushed the wait for headers starts; a large body may take a while to send.
    req.on('finish', () => {
      if (!this.response && this.connectTimer !== undefined) this.armIdle();
    });
  }

  /** The headers arrived: no more connect clock; the body's idle clock starts. */
  responded(res: IncomingMessage): void {
    this.response = res;
    clearTimeout(this.connectTimer);
    this.armIdle();
  }

  armIdle(): void {
    const { shownUrl, type, idleMs } = this.c;
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      this.c.fail(
        new FusionError(
          'PROXY_TIMEOUT',
          this.response
            ? `The proxy server at ${shownUrl} sent nothing for ${idleMs} ms while answering ${type} (not even a heartbeat); the result is incomplete and was not accepted.`
            : `The proxy server at ${shownUrl} accepted the connection but did not answer ${type} within ${idleMs} ms. Check that the URL points at the proxy server and read its logs.`,
          { url: shownUrl, command: type, timeout: 'idle', timeoutMs: idleMs },
        ),
      );
    }, idleMs);
  }

  disarmIdle(): void {
    clearTimeout(this.idleTimer);
  }

  stop(): void {
    clearTimeout(this.connectTimer);
    this.disarmIdle();
  }
}
