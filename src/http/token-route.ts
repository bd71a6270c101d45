import { Type } from '@sinclair/typebox';
import { isUuid } from '../shared/ids.js';
import { OAuthErrorSchema } from './contracts/openapi.js';
import { OAuthError, oauthReply, parseBasic } from '../shared/oauth-error.js';
import { cookieDeviceTokens, deviceCookie } from '../shared/oauth/device-tokens.js';
import { TENANT_ISSUER_PATH } from '../shared/oauth/discovery.js';
import { originOf } from './origin.js';
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
  /** A staff sign-in's device token (docs/api.md "Sign-in throttling"): sent back as `device_token` next time. */
  device_token?: string;
}

/** The Token response's schema (docs/api.md "The API"), for /openapi.json. */
export const TokenResponseSchema = Type.Object(
  {
    access_token: Type.String({ description: 'an EdDSA JWT' }),
    token_type: Type.Literal('bearer'),
    refresh_token: Type.String(),
    expires_in: Type.Integer(),
    scope: Type.String(),
    UUID: Type.String(),
    TENANT: Type.String(),
    jti: Type.String(),
    device_token: Type.Optional(
      Type.String({
        description:
          "a staff user's password sign-in only: this device's token for that user; send it as the form's " +
          '`device_token` at the next sign-in to be throttled apart from strangers (also set as the cookie `vb-device`)',
      }),
    ),
  },
  { additionalProperties: false },
);

const TokenForm = Type.Object({
  grant_type: Type.String({ enum: ['password', 'refresh_token'] }),
  username: Type.Optional(
    Type.String({ description: '`anonymous` for a customer (password empty or left out), or a staff user' }),
  ),
  password: Type.Optional(Type.String()),
  refresh_token: Type.Optional(Type.String()),
  scope: Type.Optional(Type.String({ description: '`read` or `read write`' })),
  client_id: Type.Optional(
    Type.String({
      description: 'client_secret_post: instead of HTTP Basic; alone for a public client where one exists',
    }),
  ),
  client_secret: Type.Optional(Type.String()),
  device_token: Type.Optional(
    Type.String({
      description:
        "the `device_token` of this user's last sign-in on this device: its password checks are throttled on the " +
        "device's own budget, which others' guesses do not use up; an invalid or expired one is ignored",
    }),
  ),
});

/** What the endpoint hands its service: the tenant, the client's credentials and the form. */
export interface TokenCall {
  /**
   * The tenant the request names (x-tenant, or the per-tenant endpoint's path); undefined for a refresh sent
   * without one, whose refresh token names it (docs/api.md "OAuth discovery").
   */
  tenantId: string | undefined;
  /** The origin the request was sent to (src/http/origin.ts), for the tokens' `iss`. */
  origin?: string;
  clientId: string;
  clientSecret: string;
  /** A public client (RFC 6749 2.1) of the endpoint's `publicClients`: an id in the form, no secret to check. */
  publicClient?: boolean;
  form: URLSearchParams;
  /** Device tokens presented: the form's `device_token`, then the `vb-device` cookie's (docs/api.md "Sign-in throttling"). */
  deviceTokens?: string[];
}

/**
 * The client's credentials (RFC 6749 2.3.1): HTTP Basic (client_secret_basic), or `client_id` and
 * `client_secret` in the form (client_secret_post). One method only (2.3): both at once is invalid_request.
 */
function clientCredentials(
  authorization: string | undefined,
  form: URLSearchParams,
  publicClients: readonly string[],
): { clientId: string; clientSecret: string; publicClient?: boolean } {
  const inForm = form.has('client_id') || form.has('client_secret');
  if (authorization !== undefined) {
    if (inForm)
      throw new OAuthError('invalid_request', 'client credentials in both the Authorization header and the form');
    const basic = parseBasic(authorization);
    if (!basic) throw new OAuthError('invalid_client', 'malformed HTTP Basic client credentials');
    return basic;
  }
  const clientId = form.get('client_id');
  const clientSecret = form.get('client_secret');
  // A public client (an id without a secret, RFC 6749 2.1) only where the endpoint names it: the box has none.
  if (clientId && clientSecret === null && publicClients.includes(clientId)) {
    return { clientId, clientSecret: '', publicClient: true };
  }
  if (!clientId || clientSecret === null) {
    throw new OAuthError(
      'invalid_client',
      'client credentials are required (HTTP Basic, or client_id and client_secret)',
    );
  }
  return { clientId, clientSecret };
}

/**
 * The tenant a token request names: the per-tenant endpoint's path, or `x-tenant` (both: they must agree).
 * Undefined when it names none, which only a refresh may do (its token names the tenant).
 */
function tenantOf(req: HttpRequest): string | undefined {
  const header = req.headers['x-tenant'];
  const inPath = req.params.tenant;
  if (inPath !== undefined) {
    if (!isUuid(inPath)) throw new OAuthError('invalid_request', 'the path must name a tenant UUID');
    if (header !== undefined && header !== inPath)
      throw new OAuthError('invalid_request', 'x-tenant differs from the tenant of the token endpoint');
    return inPath;
  }
  if (header !== undefined && !isUuid(header))
    throw new OAuthError('invalid_request', 'x-tenant header must be a tenant UUID');
  return header;
}

/**
 * `POST /auth-oauth2/oauth/token` in RFC 6749's shape, for the box and the central alike: form body, no repeated
 * parameter (3.1), `x-tenant`, client credentials in HTTP Basic or the form (2.3.1); its errors are RFC 6749
 * section 5.2's. `perTenant`: the same endpoint at `/auth-oauth2/tenants/:tenant/oauth/token`, the token endpoint
 * of the tenant's metadata (docs/api.md "OAuth discovery"), which takes the tenant from its path.
 */
export function tokenRoute(
  issue: (call: TokenCall, req: HttpRequest) => Promise<TokenResponse>,
  /** Client ids that may sign in without a secret (the central's console, `hq-console`); none on the box. */
  publicClients: readonly string[] = [],
  perTenant = false,
): Route {
  return {
    method: 'post',
    path: perTenant ? `${TENANT_ISSUER_PATH}/:tenant/oauth/token` : '/auth-oauth2/oauth/token',
    auth: 'none',
    body: 'form',
    // Documents the form; the endpoint reads it by RFC 6749's rules (its own errors), never through valid().
    schema: { body: TokenForm },
    doc: {
      operationId: perTenant ? 'issueTenantToken' : 'issueToken',
      summary: perTenant
        ? "The tenant's token endpoint (its metadata's token_endpoint): as the token call, the tenant from the path"
        : 'A token: a password grant (anonymous or staff) or a refresh',
      description:
        "RFC 6749: the client's credentials in HTTP Basic (the `clientBasic` scheme) or, instead, `client_id` and " +
        '`client_secret` in the form (client_secret_post: hence the alternative without a scheme); both at once is ' +
        "invalid_request. Its errors keep RFC 6749 section 5.2's shape.",
      tag: 'auth',
      security: [{ clientBasic: [] }, {}],
      ...(perTenant ? { params: { tenant: 'the tenant (UUID)' } } : {}),
      headers: [
        perTenant
          ? { name: 'x-tenant', required: false, description: 'the tenant (UUID); if sent, the one of the path' }
          : {
              name: 'x-tenant',
              required: false,
              description: 'the tenant (UUID); required but for a refresh, whose refresh token names it',
            },
      ],
      responses: {
        200: { description: 'the Token', schema: TokenResponseSchema },
        400: { description: 'RFC 6749 error', schema: OAuthErrorSchema },
        401: { description: 'invalid_client (WWW-Authenticate: Basic)', schema: OAuthErrorSchema },
        429: { description: 'temporarily_unavailable', schema: OAuthErrorSchema, headers: ['Retry-After'] },
        503: {
          description: 'temporarily_unavailable: the data disk is full',
          schema: OAuthErrorSchema,
          headers: ['Retry-After'],
        },
      },
    },
    // A full disk (the endpoint stores refresh tokens): temporarily_unavailable is RFC 6749's one code for "try
    // again later" (4.1.2.1), with the same status and Retry-After.
    errorReply: (err) =>
      err.codes[0]?.code === 'storageFull'
        ? {
            ...oauthReply(new OAuthError('temporarily_unavailable', err.message)),
            status: err.status,
            headers: err.headers,
          }
        : undefined,
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
        // No store keeps a NUL in a name or secret (the central's PostgreSQL refuses one in text outright).
        const nul = [...form].find(([k, v]) => k.includes('\0') || v.includes('\0'));
        if (nul) throw new OAuthError('invalid_request', `parameter ${nul[0].replaceAll('\0', '')} contains a NUL`);
        const tenantId = tenantOf(req);
        if (tenantId === undefined && form.get('grant_type') !== 'refresh_token')
          throw new OAuthError('invalid_request', 'x-tenant header must be a tenant UUID');
        const client = clientCredentials(req.headers.authorization, form, publicClients);
        if (client.clientId.includes('\0') || client.clientSecret.includes('\0'))
          throw new OAuthError('invalid_client', 'client credentials contain a NUL');
        const inCookie = cookieDeviceTokens(req.headers.cookie);
        const inForm = form.get('device_token');
        const deviceTokens = inForm ? [inForm, ...inCookie] : inCookie;
        const call: TokenCall = { tenantId, origin: originOf(req), ...client, form, deviceTokens };
        const token = await issue(call, req);
        // A browser keeps its device token in an HttpOnly cookie; other clients keep the body's `device_token`.
        const headers: Record<string, string> = { pragma: 'no-cache' };
        if (token.device_token) headers['set-cookie'] = deviceCookie(token.device_token, inCookie);
        return { status: 200, body: token, headers };
      } catch (err) {
        if (err instanceof OAuthError) return oauthReply(err);
        throw err;
      }
    },
  };
}
