import type { RouteDef, SimContext } from '../context';
import { objectBody } from '../context';
import { platformErrorBody } from '../errors';

/** POST /oauth/token, client-credentials grant; fields from the body (multipart, urlencoded, JSON) or the query. */
export function oauthRoutes(ctx: SimContext): RouteDef[] {
  return [
    {
      method: 'POST',
      template: '/oauth/token',
      handler: (req) => {
        const fields = { ...req.query, ...objectBody(req.body) } as Record<string, unknown>;
        const grant = fields['grant_type'];
        const clientId = typeof fields['client_id'] === 'string' ? fields['client_id'] : '';
        const clientSecret = typeof fields['client_secret'] === 'string' ? fields['client_secret'] : '';
        if (grant !== 'client_credentials') {
          return {
            status: 400,
            body: {
              error: 'unsupported_grant_type',
              error_description: 'Only client_credentials is supported',
              ...platformErrorBody(400, 'Unsupported grant type'),
            },
          };
        }
        const issued = ctx.auth.issue(clientId, clientSecret);
        if (!issued) {
          return {
            status: 401,
            body: {
              error: 'invalid_client',
              error_description: 'Bad credentials',
              ...platformErrorBody(401, 'Bad client credentials'),
            },
          };
        }
        return {
          status: 200,
          body: {
            access_token: issued.token,
            token_type: 'bearer',
            expires_in: ctx.auth.tokenTtlSeconds,
            scope: issued.client.scopes.join(' '),
            tenant_id: 'simulated-tenant',
            internal: false,
            pod: 'sim',
            strong_auth_supported: false,
            org: 'sim',
            claims_supported: false,
            strong_auth: false,
            jti: issued.token.slice(0, 12),
          },
        };
      },
    },
  ];
}
