import type { RouteDef, SimContext } from '../context';
import { accountRoutes } from './accounts';
import { oauthRoutes } from './oauth';
import { searchRoutes } from './search';
import { sourceRoutes } from './sources';

export function allRoutes(ctx: SimContext): RouteDef[] {
  return [...oauthRoutes(ctx), ...sourceRoutes(ctx), ...accountRoutes(ctx), ...searchRoutes(ctx)];
}
