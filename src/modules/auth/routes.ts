import type { Reply, Route } from '../../http/types.js';
import { isUuid } from '../../shared/ids.js';
import { OAuthError } from './oauth-error.js';
import type { AuthService } from './service.js';

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
          const token = await auth.token({ tenantId, ...basic, form });
          return { status: 200, body: token, headers: { pragma: 'no-cache' } };
        } catch (err) {
          if (err instanceof OAuthError) return oauthReply(err);
          throw err;
        }
      },
    },
  ];
}

function parseBasic(header: string | undefined): { clientId: string; clientSecret: string } | undefined {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '');
  if (!match) return undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 1) return undefined;
  return { clientId: decoded.slice(0, colon), clientSecret: decoded.slice(colon + 1) };
}

function oauthReply(err: OAuthError): Reply {
  return {
    status: err.status,
    body: { error: err.error, error_description: err.description },
    headers: err.status === 401 ? { 'WWW-Authenticate': 'Basic realm="venue-box"' } : {},
  };
}
