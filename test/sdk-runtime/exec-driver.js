// Runs commands through a built connector's own SDK `_exec`, the way the platform's runtime does:
// the configuration arrives base64-encoded in CONNECTOR_CONFIG (the SDK's readConfig outside its
// dev server), output goes to an object-mode writable. Run as a child process so LOG_LEVEL, the
// module cache and the heap are the connector's own. Input (stdin, JSON):
//   { module, resultFile, commands: [{type, input, config}], slowWritable?, heapEvery? }
// Output: the file `resultFile` (JSON), per command { outputs, keepAlives, count, heap, error?: {type, message} }.
'use strict';
const { Writable } = require('node:stream');

async function readStdin() {
  const chunks = [];
  for await (const c of process.stdin) chunks.push(c);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

async function main() {
  const plan = await readStdin();
  const mod = require(plan.module);
  const connector = typeof mod.connector === 'function' ? await mod.connector() : mod.connector;
  const results = [];
  for (const cmd of plan.commands) {
    process.env.CONNECTOR_CONFIG = Buffer.from(JSON.stringify(cmd.config)).toString('base64');
    const r = { outputs: [], keepAlives: 0, count: 0, heap: [] };
    const keep = !plan.heapEvery;
    const writable = new Writable({
      objectMode: true,
      highWaterMark: 16,
      write(chunk, _enc, cb) {
        if (chunk.type === 'keepAlive') r.keepAlives += 1;
        else if (chunk.type === 'output') {
          r.count += 1;
          if (keep) r.outputs.push(chunk.data);
          if (plan.heapEvery && r.count % plan.heapEvery === 0) {
            global.gc();
            r.heap.push(process.memoryUsage().heapUsed);
          }
        }
        if (plan.slowWritable) setImmediate(cb);
        else cb();
      },
    });
    try {
      await connector._exec(cmd.type, { commandType: cmd.type, version: 1 }, cmd.input, writable);
    } catch (e) {
      r.error = {
        type: e && e.type ? e.type : 'none',
        message: e && e.message ? e.message : String(e),
        name: e && e.constructor ? e.constructor.name : typeof e,
      };
    }
    await new Promise((resolve) => writable.end(resolve));
    results.push(r);
  }
  // A file, not stdout: the connector's own log lines (pino) may still be flushing to stdout.
  require('node:fs').writeFileSync(plan.resultFile, JSON.stringify(results));
}

main().then(
  () => process.exit(0),
  (e) => {
    process.stdout.write(`\n@@FATAL@@${e && e.stack ? e.stack : String(e)}\n`);
    process.exit(1);
  },
);
