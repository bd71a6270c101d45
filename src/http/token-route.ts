import { isUuid } from '../shared/ids.js';
import { OAuthError, oauthReply, parseBasic } from '../shared/oauth-error.js';
import type { HttpRequest, Route } from './types.js';

/** The token endpoint's answer (the interface's Token), the same on the box and on the central. */
export interface TokenResponse {
  access_token: string;
  token_type: 'bearer';
  refresh_token: string;
  expires_in: number;
  scope: string;
  UUID: string;
  TENANT: string;
  jti: string;
}

/** What the endpoint hands its service: the tenant, the client's credentials and the form. */
export interface TokenCall {
  tenantId: string;
  clientId: string;
  clientSecret: string;
  form: URLSearchParams;
}

/**
 * `POST /auth-oauth2/oauth/token` in RFC 6749's shape, for the box and the central alike: form body, no repeated
 * parameter (3.1), `x-tenant`, HTTP Basic client credentials (2.3.1); its errors are RFC 6749 section 5.2's.
 */
export function tokenRoute(issue: (call: TokenCall, req: HttpRequest) => Promise<TokenResponse>): Route {
  return {
    method: 'post',
    path: '/auth-oauth2/oauth/token',
    auth: 'none',
    body: 'form',
    // A full disk (the endpoint stores refresh tokens): temporarily_unavailable is RFC 6749's one code for "try
    // again later" (4.1.2.1), with the same status and Retry-After.
    errorReply: (err) => (err.codes[0]?.code === 'storageFull'
      ? { status: err.status, body: { error: 'temporarily_unavailable', error_description: err.message }, headers: err.headers }
      : undefined),
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
        return { status: 200, body: await issue({ tenantId, ...basic, form }, req), headers: { pragma: 'no-cache' } };
      } catch (err) {
        if (err instanceof OAuthError) return oauthReply(err);
        throw err;
      }
    },
  };
}
