import type { Redis } from 'ioredis';
import type { CommandRunner } from '../core/command-runner';
import { createCoreRunner } from '../core/core-runner';

/** Shared infrastructure the production runner may use: Redis in queue mode, nothing in embedded mode. */
export interface RuntimeDeps {
  redis?: Redis;
}

/** The CommandRunner wired to the connector core, used by `fusion-proxy serve` and the SDK connector. */
export function createProductionRunner(_deps: RuntimeDeps = {}): CommandRunner {
  return createCoreRunner({});
}
