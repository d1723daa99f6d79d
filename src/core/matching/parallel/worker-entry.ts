/**
 * Starting a worker thread on one of our entry files. The thread runs the compiled entry (dist/,
 * .bench-out/); from TypeScript sources (jest) it compiles them on load with @swc/core, a dev
 * dependency. Where neither exists (the connector's single-file bundle) there is no worker entry
 * and the work stays in-thread (entryAvailable() is false).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';

// Registers a .ts loader in the thread, then loads the entry: only when running from sources.
const fromSource = (source: string): string => `
const { readFileSync } = require('node:fs');
const { transformSync } = require('@swc/core');
require.extensions['.ts'] = (module, file) => {
  const { code } = transformSync(readFileSync(file, 'utf8'), {
    filename: file,
    jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
    module: { type: 'commonjs' },
  });
  module._compile(code, file);
};
require(${JSON.stringify(source)});
`;

/** Threads started and not yet exited, for the tests that check none is left behind. */
let live = 0;
export function liveMatchingThreads(): number {
  return live;
}

/** An entry file (`dir`/`name`.js, or .ts from sources). */
export class WorkerEntry {
  private readonly compiled: string;
  private readonly source: string;

  constructor(dir: string, name: string) {
    this.compiled = join(dir, `${name}.js`);
    this.source = join(dir, `${name}.ts`);
  }

  available(): boolean {
    return existsSync(this.compiled) || existsSync(this.source);
  }

  /** A thread on the entry; counted live until it exits. */
  start(workerData: unknown): Worker {
    const worker = existsSync(this.compiled)
      ? new Worker(this.compiled, { workerData })
      : new Worker(fromSource(this.source), { eval: true, workerData });
    live++;
    worker.once('exit', () => live--);
    return worker;
  }
}
