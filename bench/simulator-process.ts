/**
 * The simulator in a process of its own, for benches that measure the connector's side: the
 * platform is another system, so its CPU and its request timestamps must not share the bench's
 * event loop. Started by bench/harness.ts (startSimulatorProcess) with the simulator's options as
 * its argument; answers the harness's control calls over IPC.
 */
import { startSimulator, type SimulatorOptions } from '../src/simulator';
import type { FaultSpec } from '../src/simulator/faults';
import type { SimulatorControlCall, SimulatorInfo } from './harness';

async function main(): Promise<void> {
  const sim = await startSimulator(JSON.parse(process.argv[2] ?? '{}') as SimulatorOptions);
  const t = sim.tenant;
  const info: SimulatorInfo = {
    baseurl: sim.baseurl,
    clientId: sim.clientId,
    clientSecret: sim.clientSecret,
    fusionSourceId: t.meta.fusionSourceId!,
    sourceIds: Object.fromEntries([...t.sources.values()].map((s) => [s.name, s.id])),
    accounts: t.accounts.size,
  };
  process.send?.({ ready: info });
  process.on('message', (m: SimulatorControlCall) => {
    void (async () => {
      let result: unknown;
      if (m.cmd === 'resetLog') sim.control.resetLog();
      else if (m.cmd === 'setRateLimit')
        sim.control.setRateLimit(typeof m.arg === 'number' ? { requests: m.arg, windowMs: 1000 } : false);
      else if (m.cmd === 'injectFault') sim.control.injectFault(m.arg as FaultSpec);
      else if (m.cmd === 'requestLog')
        result = sim.control.requestLog().filter((e) => m.arg === undefined || e.template === m.arg);
      else if (m.cmd === 'counters') result = sim.control.counters();
      else if (m.cmd === 'close') await sim.close();
      process.send?.({ id: m.id, result });
      if (m.cmd === 'close') process.disconnect();
    })();
  });
}

main().catch((e: unknown) => {
  process.stderr.write(`bench simulator: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
