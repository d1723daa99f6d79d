import { FusionError } from '../core/errors';

function shuttingDown(): FusionError {
  return new FusionError(
    'SERVER_SHUTTING_DOWN',
    'the proxy server is shutting down and stopped this command before it finished; run the command again',
  );
}

/**
 * The api's shutdown, in two phases. Draining (from SIGTERM): the listener stays open so new
 * requests get a `503 SERVER_SHUTTING_DOWN` answer (and /readyz `503`) instead of a refused
 * connection, while open streams go on. Then, once they are done or SHUTDOWN_GRACE_MS is up
 * (the rest are stopped), the listener closes.
 */
export class ShutdownState {
  private drainingSince: number | undefined;
  /** Commands being answered now, so the end of the grace period can stop them. */
  readonly open = new Set<AbortController>();
  private idleWaiters: Array<() => void> = [];

  get draining(): boolean {
    return this.drainingSince !== undefined;
  }

  track(controller: AbortController): () => void {
    this.open.add(controller);
    return () => {
      this.open.delete(controller);
      if (this.open.size === 0) for (const w of this.idleWaiters.splice(0)) w();
    };
  }

  /** Starts draining, then resolves once every open command is done, stopping those still open after `graceMs`. */
  async drain(graceMs: number): Promise<void> {
    this.drainingSince ??= Date.now();
    if (this.open.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const idle = new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    const graceOver = new Promise<'grace'>((resolve) => {
      timer = setTimeout(() => resolve('grace'), graceMs);
    });
    if ((await Promise.race([idle, graceOver])) === 'grace') this.stopAll();
    clearTimeout(timer);
  }

  stopAll(): void {
    for (const c of this.open) c.abort(shuttingDown());
  }
}
