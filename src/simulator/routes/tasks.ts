import { ok, versioned, type RouteDef, type SimContext } from '../context';
import {
  aggregationStatusView,
  loadAccountsTaskView,
  pollTask,
  startAggregationTask,
  taskStatusView,
} from '../aggregation-tasks';

const TASK_VERSIONS = ['v3', 'beta', 'v2024'] as const;

/**
 * Aggregation: POST /{v3,beta,v2024}/sources/{id}/load-accounts answers 202 with a LoadAccountsTask; the task is
 * polled with GET /{beta,v2024}/task-status/{id} or /account-aggregations/{id}/status (each call is one poll).
 */
export function taskRoutes(ctx: SimContext): RouteDef[] {
  return [
    ...versioned(TASK_VERSIONS, {
      method: 'POST',
      path: '/sources/{id}/load-accounts',
      scope: 'sourcesWrite',
      handler: (req) => ok(loadAccountsTaskView(startAggregationTask(ctx, req.params['id'] as string)), 202),
    }),
    ...versioned(TASK_VERSIONS, {
      method: 'GET',
      path: '/task-status/{id}',
      scope: 'tasks',
      handler: async (req) => ok(taskStatusView(ctx, await pollTask(ctx, req.params['id'] as string))),
    }),
    ...versioned(TASK_VERSIONS, {
      method: 'GET',
      path: '/account-aggregations/{id}/status',
      scope: 'tasks',
      handler: async (req) => ok(aggregationStatusView(ctx, await pollTask(ctx, req.params['id'] as string))),
    }),
  ];
}
