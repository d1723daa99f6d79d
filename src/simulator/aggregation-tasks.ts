import type { SimContext } from './context';
import { errorMessage } from '../core/errors';
import { notFound } from './errors';
import type { TaskOutcome, TaskRecord } from './records';

const DEFAULT_OUTCOME: TaskOutcome = { kind: 'succeed', afterPolls: 1 };

/** Starts an aggregation task for a source; its outcome comes from the control settings. */
export function startAggregationTask(ctx: SimContext, sourceId: string): TaskRecord {
  const { tenant } = ctx;
  const source = tenant.source(sourceId);
  const outcome: TaskOutcome = source.enabled
    ? (ctx.aggregationOutcomes.get(sourceId) ?? ctx.aggregationOutcomes.get('*') ?? DEFAULT_OUTCOME)
    : { kind: 'fail', afterPolls: 0, message: `Source ${source.name} is disabled; aggregation is not allowed` };
  const task: TaskRecord = {
    id: tenant.newId(),
    sourceId,
    type: 'CLOUD_ACCOUNT_AGGREGATION',
    created: tenant.now(),
    launched: null,
    completed: null,
    polls: 0,
    outcome,
    completionStatus: null,
    messages: [],
  };
  tenant.tasks.set(task.id, task);
  const playing = outcome.kind === 'succeed' ? ctx.playAggregation?.(sourceId) : undefined;
  if (playing) {
    // The platform reads the connector while the task runs; polls see it running until then.
    task.launched = task.created;
    const state: NonNullable<TaskRecord['playing']> = { settled: false };
    task.playing = state;
    playing.then(
      (summary) => Object.assign(state, { settled: true, summary }),
      (e: unknown) => Object.assign(state, { settled: true, error: errorMessage(e) }),
    );
  }
  return task;
}

async function complete(ctx: SimContext, task: TaskRecord): Promise<void> {
  const { tenant } = ctx;
  const o = task.outcome;
  task.launched ??= task.created;
  if (task.playing) {
    task.completionStatus = task.playing.error === undefined ? 'SUCCESS' : 'ERROR';
    if (task.playing.error !== undefined) task.messages.push({ type: 'ERROR', text: task.playing.error });
    else if (task.playing.summary) task.messages.push({ type: 'INFO', text: task.playing.summary });
  } else if (o.kind === 'fail') {
    task.completionStatus = 'ERROR';
    task.messages.push({ type: 'ERROR', text: o.message });
  } else if (o.kind === 'succeed') {
    try {
      await ctx.onAggregationSuccess?.(task.sourceId);
      task.completionStatus = o.warning ? 'WARNING' : 'SUCCESS';
      if (o.warning) task.messages.push({ type: 'WARN', text: o.warning });
    } catch (e) {
      task.completionStatus = 'ERROR';
      task.messages.push({ type: 'ERROR', text: errorMessage(e) });
    }
  }
  task.completed = tenant.now();
  const source = tenant.sources.get(task.sourceId);
  const passed = task.completionStatus === 'SUCCESS' || task.completionStatus === 'WARNING';
  tenant.addEvent({
    id: tenant.newId(),
    name: passed ? 'Aggregate Source Account Passed' : 'Aggregate Source Account Failed',
    type: 'SOURCE_MANAGEMENT',
    technicalName: passed ? 'SOURCE_ACCOUNT_AGGREGATE_PASSED' : 'SOURCE_ACCOUNT_AGGREGATE_FAILED',
    operation: 'AGGREGATE',
    status: passed ? 'PASSED' : 'FAILED',
    objects: ['SOURCE', 'ACCOUNT'],
    target: { name: `${source?.name ?? task.sourceId} [source]` },
    created: task.completed,
    attributes: { sourceName: source?.name ?? '', taskId: task.id },
  });
}

/** One poll of a task: advances it per its outcome, completing it on the configured poll. */
export async function pollTask(ctx: SimContext, id: string): Promise<TaskRecord> {
  const task = ctx.tenant.tasks.get(id);
  if (!task) throw notFound(`Task ${id} was not found`);
  if (task.completionStatus !== null) return task;
  task.polls++;
  task.launched ??= ctx.tenant.now();
  const o = task.outcome;
  if (task.playing) {
    if (task.playing.settled) await complete(ctx, task);
  } else if (o.kind !== 'never' && task.polls >= o.afterPolls) await complete(ctx, task);
  return task;
}

export function loadAccountsTaskView(t: TaskRecord): Record<string, unknown> {
  return {
    success: true,
    task: {
      id: t.id,
      type: t.type,
      name: 'Cloud Account Aggregation',
      description: 'Aggregate from the specified application',
      launcher: 'system',
      created: t.created,
      launched: t.launched,
      completed: t.completed,
      completionStatus: t.completionStatus,
      parentName: null,
      messages: t.messages.map((m) => ({ type: m.type, localizedText: { locale: 'en-US', message: m.text } })),
      progress: 'Initializing...',
      attributes: { appId: t.sourceId, optimizedAggregation: 'enabled' },
      returns: [],
    },
  };
}

export function taskStatusView(ctx: SimContext, t: TaskRecord): Record<string, unknown> {
  const source = ctx.tenant.sources.get(t.sourceId);
  const total = ctx.tenant.accountsOfSource(t.sourceId).size;
  return {
    id: t.id,
    type: 'QUARTZ',
    uniqueName: `Cloud Account Aggregation - ${source?.name ?? t.sourceId}`,
    description: 'Aggregate from the specified application',
    parentName: null,
    launcher: 'system',
    target: { id: t.sourceId, type: 'SOURCE', name: source?.name ?? '' },
    created: t.created,
    modified: t.completed ?? t.launched ?? t.created,
    launched: t.launched,
    completed: t.completed,
    completionStatus: t.completionStatus,
    messages: t.messages.map((m) => ({
      type: m.type,
      localizedText: { locale: 'en-US', message: m.text },
      key: m.text,
      parameters: [],
    })),
    returns: [{ displayLabel: 'TASK_OUT_ACCOUNT_AGGREGATION_APPLICATIONS', attributeName: 'applications' }],
    attributes: { appId: t.sourceId, sourceId: t.sourceId },
    progress: t.completed ? 'Completed' : 'Aggregating accounts',
    percentComplete: t.completed ? 100 : 50,
    totalAccounts: total,
  };
}

export function aggregationStatusView(ctx: SimContext, t: TaskRecord): Record<string, unknown> {
  const total = ctx.tenant.accountsOfSource(t.sourceId).size;
  const status = t.completionStatus === null ? 'STARTED' : t.completionStatus === 'ERROR' ? 'TERMINATED' : 'COMPLETED';
  return { start: t.launched ?? t.created, status, totalAccounts: total, processedAccounts: t.completed ? total : 0 };
}
