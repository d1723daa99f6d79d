/**
 * Which slots a command waits for. An aggregation (and an entitlement list, which pages every connector
 * account) may hold a slot for minutes to hours; a test connection or a single-account command takes a
 * second. They never share slots, so the platform's quick calls are answered while every long slot runs an
 * aggregation: embedded mode keeps a slot pool per lane, queue mode a BullMQ queue per lane that every
 * worker serves.
 */
import type { CommandType } from '../core/command-types';

export type CommandLane = 'long' | 'quick';

export const COMMAND_LANES: readonly CommandLane[] = ['long', 'quick'];

const LONG: ReadonlySet<CommandType> = new Set<CommandType>(['std:account:list', 'std:entitlement:list']);

export function laneOf(type: CommandType): CommandLane {
  return LONG.has(type) ? 'long' : 'quick';
}
