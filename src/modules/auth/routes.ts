import type { Route } from '../../http/types.js';
import { isUuid } from '../../shared/ids.js';
import { OAuthError, oauthReply, parseBasic } from '../../shared/oauth-error.js';
import type { AuthService } from './service.js';
import { throttleAddress } from './throttle.js';

export function authRoutes(auth: AuthService): Route[] {
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
          // RFC 6749 3.1: parameters must not be repeated (grant_type=password&grant_type=refresh_token).
          const form = body as URLSearchParams;
          const repeated = [...new Set(form.keys())].find((key) => form.getAll(key).length > 1);
          if (repeated) throw new OAuthError('invalid_request', `parameter ${repeated} is repeated`);
          const tenantId = req.headers['x-tenant'] ?? '';
          if (!isUuid(tenantId)) throw new OAuthError('invalid_request', 'x-tenant header must be a tenant UUID');
          const basic = parseBasic(req.headers.authorization);
          if (!basic) throw new OAuthError('invalid_client', 'HTTP Basic client credentials are required');
          const clientAddress = throttleAddress(req.remoteAddress);
          const token = await auth.token({ tenantId, ...basic, clientAddress, form });
          return { status: 200, body: token, headers: { pragma: 'no-cache' } };
        } catch (err) {
          if (err instanceof OAuthError) return oauthReply(err);
          throw err;
        }
      },
    },
  ];
}
