import type { Route } from '../../../http/types.js';
import { OAuthError, oauthReply, parseBasic } from '../../../shared/oauth-error.js';
import type { CentralAuth } from './service.js';

/** The central's token endpoint: RFC 6749's shape, like the box's (DESIGN.md "Errors"). */
export function authRoutes(auth: CentralAuth): Route[] {
  return [
    {
      method: 'post',
      path: '/auth-oauth2/oauth/token',
      auth: 'none',
      body: 'form',
      async handle({ req, body }) {
        try {
          const type = req.headers['content-type'] ?? '';
          if (!/^application\/x-www-form-urlencoded\s*(;|$)/i.test(type)) {
            throw new OAuthError('invalid_request', 'body must be application/x-www-form-urlencoded');
          }
          const form = body as URLSearchParams;
          const repeated = [...new Set(form.keys())].find((k) => form.getAll(k).length > 1);
          if (repeated) throw new OAuthError('invalid_request', `parameter ${repeated} is repeated`);
          const tenantId = req.headers['x-tenant'] ?? '';
          if (tenantId === '' || tenantId.length > 64) throw new OAuthError('invalid_request', 'x-tenant header must name a tenant');
          const basic = parseBasic(req.headers.authorization);
          if (!basic) throw new OAuthError('invalid_client', 'HTTP Basic client credentials are required');
          return { status: 200, body: await auth.token({ tenantId, ...basic, form }), headers: { pragma: 'no-cache' } };
        } catch (err) {
          if (err instanceof OAuthError) return oauthReply(err);
          throw err;
        }
      },
    },
  ];
}
