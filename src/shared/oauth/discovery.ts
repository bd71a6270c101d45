import { Type } from '@sinclair/typebox';
import { originOf } from '../../http/origin.js';
import type { HttpRequest, Route } from '../../http/types.js';
import { invalidField, notFound } from '../errors.js';
import { isUuid } from '../ids.js';
import { publicJwkOf, type SigningKey } from '../jwt.js';

/*
 * OAuth discovery (docs/api.md "OAuth discovery"): RFC 8414 metadata per tenant and the signing keys as a JWKS
 * (RFC 7517, Ed25519 keys as RFC 8037 has them), on the box and on the central alike, so that a client or an API
 * gateway that knows only the issuer finds the token endpoint and verifies the tokens by standard means.
 */

/** Where the tenant's issuer, and so its metadata and per-tenant token endpoint, live under an origin. */
export const TENANT_ISSUER_PATH = '/auth-oauth2/tenants';
export const METADATA_PATH = '/.well-known/oauth-authorization-server';
export const JWKS_PATH = '/.well-known/jwks.json';

/** The tenant's issuer identifier: `{origin}/auth-oauth2/tenants/{tenantId}`. */
export const issuerOf = (origin: string, tenantId: string): string => `${origin}${TENANT_ISSUER_PATH}/${tenantId}`;

/** What the node's token endpoint offers, for its metadata. */
export interface DiscoveryOptions {
  /** The keys whose tokens may still be live: the JWKS lists them all. */
  keys(): SigningKey[];
  /** Whether the node knows the tenant: an unknown one has no metadata (404). */
  tenantExists(tenantId: string): boolean | Promise<boolean>;
  scopes: readonly string[];
  /** Client authentication methods beyond client_secret_basic and client_secret_post (`none`: a public client). */
  publicClients?: boolean;
}

const Metadata = Type.Object({
  issuer: Type.String(),
  token_endpoint: Type.String(),
  jwks_uri: Type.String(),
  grant_types_supported: Type.Array(Type.String()),
  token_endpoint_auth_methods_supported: Type.Array(Type.String()),
  scopes_supported: Type.Array(Type.String()),
  response_types_supported: Type.Array(Type.String()),
  service_documentation: Type.String(),
});

const Jwks = Type.Object({
  keys: Type.Array(
    Type.Object({
      kty: Type.Literal('OKP'),
      crv: Type.Literal('Ed25519'),
      x: Type.String(),
      kid: Type.String(),
      alg: Type.Literal('EdDSA'),
      use: Type.Literal('sig'),
    }),
  ),
});

/** The origin of a request that names URLs in its answer; a 400 for a Host that is not a sane host[:port]. */
function requireOrigin(req: HttpRequest): string {
  const origin = originOf(req);
  if (origin === undefined) throw invalidField('Host', 'the Host header is not a host name or address and port');
  return origin;
}

/** The metadata and JWKS routes of a node (the box's or the central's auth module mounts them). */
export function discoveryRoutes(options: DiscoveryOptions): Route[] {
  const methods = ['client_secret_basic', 'client_secret_post', ...(options.publicClients ? ['none'] : [])];
  return [
    {
      method: 'get',
      path: `${METADATA_PATH}${TENANT_ISSUER_PATH}/:tenant`,
      auth: 'none',
      body: 'none',
      doc: {
        summary: "The tenant's OAuth 2.0 Authorization Server Metadata (RFC 8414)",
        description:
          'At the issuer `{origin}/auth-oauth2/tenants/{tenant}` with RFC 8414 section 3 path insertion; URLs name the origin of the request.',
        operationId: 'getAuthorizationServerMetadata',
        tag: 'auth',
        params: { tenant: 'the tenant (UUID)' },
        responses: {
          200: { description: 'the metadata', schema: Metadata },
          400: { description: 'a Host header that is not a host name or address and port' },
          404: { description: 'a tenant this node does not know' },
        },
      },
      async handle({ req }) {
        const tenantId = req.params.tenant ?? '';
        if (!isUuid(tenantId) || !(await options.tenantExists(tenantId))) throw notFound('tenant');
        const origin = requireOrigin(req);
        const issuer = issuerOf(origin, tenantId);
        return {
          status: 200,
          body: {
            issuer,
            token_endpoint: `${issuer}/oauth/token`,
            jwks_uri: `${origin}${JWKS_PATH}`,
            grant_types_supported: ['password', 'refresh_token'],
            token_endpoint_auth_methods_supported: methods,
            scopes_supported: options.scopes,
            // Required by RFC 8414, and about the authorization endpoint, which this server does not have.
            response_types_supported: [],
            service_documentation: `${origin}/docs/api`,
          },
        };
      },
    },
    {
      method: 'get',
      path: JWKS_PATH,
      auth: 'none',
      body: 'none',
      doc: {
        summary: 'The public keys that verify access tokens, as a JWK Set (RFC 7517; Ed25519 keys, RFC 8037)',
        operationId: 'getJsonWebKeySet',
        tag: 'auth',
        responses: { 200: { description: 'the key set', schema: Jwks } },
      },
      handle: () => ({
        status: 200,
        body: { keys: options.keys().map(publicJwkOf) },
        // A gateway may keep the set a while: a key is listed as long as a token it signed may be live.
        headers: { 'cache-control': 'public, max-age=300' },
      }),
    },
  ];
}
