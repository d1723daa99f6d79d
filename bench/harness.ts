/**
 * What the benches share with the tests (test/support), so both start things one way: free ports,
 * a Redis of their own (stopped with its folder by stop()), connections whose errors stay quiet, and
 * the simulator in a process of its own.
 */
import { fork } from 'node:child_process';
import { join } from 'node:path';
import { Redis, type RedisOptions } from 'ioredis';
import type { RequestLogEntry, SimulatorCounters, SimulatorOptions } from '../src/simulator';
import type { FaultSpec } from '../src/simulator/faults';
import { startOwnRedis } from '../test/support/own-redis';

export { freePort } from '../test/support/free-port';

/**
 * A connection of the bench's own. An ioredis connection without an 'error' listener prints a
 * stack trace for every reconnect attempt once its Redis goes away (at the end of a run, when a
 * child is killed): a bench's output must stay its figures.
 */
export function benchConnection(url: string, options: RedisOptions = {}): Redis {
  const redis = new Redis(url, options);
  redis.on('error', () => undefined);
  return redis;
}

export interface BenchRedis {
  url: string;
  /** Its process id, for benches that measure its CPU; undefined for a Redis given by REDIS_URL. */
  pid?: number;
  /** Kills it and removes its folder; a Redis given by REDIS_URL is left alone. */
  stop(): Promise<void>;
}

/** A redis-server of the bench's own on a free port, no persistence, answering PING (test/support/own-redis.ts). */
export async function spawnRedis(): Promise<BenchRedis> {
  const own = await startOwnRedis();
  return { url: own.url, pid: own.pid, stop: () => own.stop() };
}

/** What a simulator process tells the bench once it listens. */
export interface SimulatorInfo {
  baseurl: string;
  clientId: string;
  clientSecret: string;
  fusionSourceId: string;
  /** Source name -> id. */
  sourceIds: Record<string, string>;
  accounts: number;
}

/** A control call to the simulator process (bench/simulator-process.ts). */
export interface SimulatorControlCall {
  id: number;
  cmd: 'resetLog' | 'setRateLimit' | 'injectFault' | 'requestLog' | 'counters' | 'close';
  arg?: unknown;
}

export interface SimulatorProcess {
  info: SimulatorInfo;
  /** For benches that report the platform's CPU apart. */
  pid: number;
  resetLog(): Promise<void>;
  /** Requests per second per client; false: none. */
  setRateLimit(perSecond: number | false): Promise<void>;
  /** A fault (or a latency) on the requests it matches, as SimulatorControl.injectFault. */
  injectFault(fault: FaultSpec): Promise<void>;
  /** The request log, of one route template when given (the simulator keeps it with logRequests). */
  requestLog(template?: string): Promise<RequestLogEntry[]>;
  counters(): Promise<SimulatorCounters>;
  stop(): Promise<void>;
}

/**
 * The simulator in a process of its own (bench/simulator-process.ts), with these options: the one
 * way a bench runs the platform apart from itself. A bench that needs no separate process calls
 * startSimulator() from src/simulator in process.
 */
export async function startSimulatorProcess(options: SimulatorOptions): Promise<SimulatorProcess> {
  const child = fork(join(__dirname, 'simulator-process.js'), [JSON.stringify(options)], { stdio: 'inherit' });
  const pending = new Map<number, (v: unknown) => void>();
  let seq = 0;
  const info = await new Promise<SimulatorInfo>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the simulator process exited with ${String(code)}`)));
    child.on('message', (m: { ready?: SimulatorInfo; id?: number; result?: unknown }) => {
      if (m.ready) resolve(m.ready);
      else if (m.id !== undefined) pending.get(m.id)?.(m.result);
    });
  });
  child.removeAllListeners('exit');
  const exited = (): Promise<void> =>
    child.exitCode !== null || child.signalCode !== null
      ? Promise.resolve()
      : new Promise((r) => child.once('exit', () => r()));
  const ask = <T>(cmd: SimulatorControlCall['cmd'], arg?: unknown): Promise<T> =>
    new Promise((resolve) => {
      const id = ++seq;
      pending.set(id, (v) => {
        pending.delete(id);
        resolve(v as T);
      });
      child.send({ id, cmd, arg } satisfies SimulatorControlCall);
    });
  return {
    info,
    pid: child.pid!,
    resetLog: () => ask('resetLog'),
    setRateLimit: (perSecond) => ask('setRateLimit', perSecond),
    injectFault: (fault) => ask('injectFault', fault),
    requestLog: (template) => ask('requestLog', template),
    counters: () => ask('counters'),
    async stop() {
      if (child.connected) await ask('close');
      else child.kill('SIGTERM');
      await exited();
    },
  };
}
