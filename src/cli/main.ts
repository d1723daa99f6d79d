#!/usr/bin/env node
import { errorMessage } from '../core/errors';

/** Once `serve` stopped, how long the process waits for the event loop to empty by itself. */
const LEFTOVER_MS = 1000;

/** A sub-command: receives its own arguments and resolves to the process exit code. */
export type SubCommand = (argv: string[]) => Promise<number>;

const COMMANDS: Record<string, { summary: string; load: () => Promise<SubCommand> }> = {
  serve: {
    summary: 'run the proxy server (api and/or worker; embedded mode without REDIS_URL)',
    load: async () => {
      const { run } = await import('./serve');
      return async (argv) => {
        const code = await run(argv, {
          // Past the grace and a bounded clean-up the process exits, whatever still holds it.
          onStopping: ({ withinMs, overdue }) =>
            setTimeout(() => {
              overdue();
              process.exit(1);
            }, withinMs).unref(),
        });
        // Everything of ours is closed. What a library may leave behind when Redis does not answer (a
        // BullMQ connection that was never ready keeps retrying) must not keep the process alive.
        setTimeout(() => process.exit(code), LEFTOVER_MS).unref();
        return code;
      };
    },
  },
  invoke: {
    summary: 'send one command to a proxy server and print its NDJSON output',
    load: async () => (await import('./invoke')).run,
  },
  check: {
    summary: 'check a deployed proxy end to end without platform credentials (helm test)',
    load: async () => (await import('./check')).run,
  },
  simulator: { summary: 'run the platform API simulator', load: async () => (await import('./simulator')).run },
  aggregate: {
    summary: "ask the platform (or the simulator) to aggregate the connector's source, and wait",
    load: async () => (await import('./aggregate')).run,
  },
  demo: {
    summary: 'simulator + embedded server + a full aggregation, with a summary',
    load: async () => (await import('./demo')).run,
  },
  match: {
    summary: 'offline matching of records, for tuning thresholds',
    load: async () => (await import('./match')).run,
  },
};

function usage(): string {
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(10)} ${c.summary}`);
  return `usage: fusion-proxy <command> [options]\n\ncommands:\n${lines.join('\n')}\n`;
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(usage());
    return name ? 0 : 2;
  }
  const entry = COMMANDS[name];
  if (!entry) {
    process.stderr.write(`fusion-proxy: unknown command "${name}"\n${usage()}`);
    return 2;
  }
  const run = await entry.load();
  return run(rest);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`fusion-proxy: ${errorMessage(e)}\n`);
    process.exitCode = 1;
  },
);
