import type { RouteDef, SimContext } from '../context';
import { accessProfileRoutes } from './access-profiles';
import { accountRoutes } from './accounts';
import { formRoutes } from './forms';
import { oauthRoutes } from './oauth';
import { searchRoutes } from './search';
import { sourceRoutes } from './sources';
import { taskRoutes } from './tasks';
import { workflowRoutes } from './workflows';

export function allRoutes(ctx: SimContext): RouteDef[] {
  return [
    ...oauthRoutes(ctx),
    ...sourceRoutes(ctx),
    ...accountRoutes(ctx),
    ...searchRoutes(ctx),
    ...formRoutes(ctx),
    ...workflowRoutes(ctx),
    ...accessProfileRoutes(ctx),
    ...taskRoutes(ctx),
  ];
}
