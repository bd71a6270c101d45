import { createHash, createHmac, randomBytes } from 'node:crypto';
import type { TokenCall, TokenResponse } from '../../http/token-route.js';
import { newId } from '../ids.js';
import { type SigningKey, signJwt } from '../jwt.js';
import { OAuthError } from '../oauth-error.js';
import { createCredentialChecks } from './credentials.js';
import { createDeviceTokens } from './device-tokens.js';
import { issuerOf } from './discovery.js';
import type { NewRefresh, OAuthStore, RefreshRow, Rotation } from './store.js';
import { createLoginThrottle, type ThrottleOptions } from './throttle.js';

export interface TokenRequest extends TokenCall {
  /** The client's address as the throttle keys it (throttleAddress of the peer IP). */
  clientAddress: string;
}

/** A token request whose tenant is known (named by the request, or by its refresh token). */
type TenantRequest = TokenRequest & { tenantId: string };

export interface OAuthOptions {
  accessTtlSeconds: number;
  refreshTtlMs: number;
  /**
   * How long after a refresh the same refresh token may be presented again and get the same answer (a client
   * retrying after a lost response); 0: never, any second presentation is reuse.
   */
  refreshRetryGraceMs: number;
  throttle: ThrottleOptions;
  now: () => number;
  /**
   * The anonymous customer (`username=anonymous`, empty password): the scope it gets and the limit on new ones
   * per address (throws 429 past it). Absent where there is none (the central: all its data is headquarters').
   */
  anonymous?: { scope: string[]; admit(clientAddress: string): void };
  /**
   * Public clients (RFC 6749 2.1: a browser app cannot keep a secret), signed in without client authentication;
   * the user's password is still checked and throttled, and a refresh token only refreshes for its own client.
   */
  publicClients?: readonly string[];
}

export const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/**
 * The token endpoint of the box and of the central (docs/api.md "Sign-in throttling", "Token revocation"): the
 * password and refresh_token grants, client authentication and sign-ins through the throttle (./throttle.ts),
 * refresh rotation whose reuse revokes the family, and a retry grace. Each node supplies only its store (./store.ts).
 */
export function createOAuthServer(store: OAuthStore, key: SigningKey, options: OAuthOptions) {
  const credentials = createCredentialChecks(store, createLoginThrottle(options.throttle, options.now));
  const devices = createDeviceTokens(key.secretKey, options.now);

  function grantScope(requested: string | null, allowed: string[]): string[] {
    if (requested === null || requested.trim() === '') return allowed;
    const wanted = [...new Set(requested.trim().split(/\s+/))];
    const extra = wanted.filter((s) => !allowed.includes(s));
    if (extra.length > 0) throw new OAuthError('invalid_scope', `scope not allowed: ${extra.join(' ')}`);
    return allowed.filter((s) => wanted.includes(s));
  }

  // A refresh grant's new refresh token is derived from the one presented (HMAC under a key of the node), not
  // drawn at random: a retry of the same refresh within the grace derives it again, and its access token is
  // signed again from the successor row's claims (Ed25519 signatures are deterministic), so the retry gets the
  // identical pair while no usable secret is ever stored, only hashes and claims (docs/api.md "Token revocation").
  const successorKey = createHmac('sha256', key.secretKey).update('venue-box refresh successor v1').digest();
  const successorOf = (presented: string): string =>
    createHmac('sha256', successorKey).update(presented).digest('base64url');

  /** The Token response; the same claims and refresh token always give the same bytes. */
  function tokenResponse(
    req: TenantRequest,
    user: { userId: string; tenantId: string; scope: string },
    jti: string,
    iat: number,
    exp: number,
    refresh: string,
  ): TokenResponse {
    // `iss` names the tenant's issuer at the origin the token was asked at, `sub` the user (RFC 9068's names, for
    // standard verifiers: docs/api.md "OAuth discovery"); both after the claims older tokens had.
    const iss = req.origin === undefined ? {} : { iss: issuerOf(req.origin, user.tenantId) };
    const claims = { UUID: user.userId, TENANT: user.tenantId, scope: user.scope, jti, iat, exp, ...iss };
    const access = signJwt(key, { ...claims, sub: user.userId });
    return {
      access_token: access,
      token_type: 'bearer',
      refresh_token: refresh,
      expires_in: exp - iat,
      scope: user.scope,
      UUID: user.userId,
      TENANT: user.tenantId,
      jti,
    };
  }

  /** A new pair: the refresh row to store (it names the access token, so revoking the family revokes that too). */
  function issue(
    req: TenantRequest,
    user: { userId: string; scope: string[]; staff: boolean },
    familyId: string,
    refresh: string,
    now: number,
  ): { row: NewRefresh; answer: TokenResponse } {
    // Claims are whole seconds. Rounded down, a token issued at x.999 s would live ttl - 0.999 s (a 1-second
    // token 1 ms, refused at once); rounded to the nearest second it lives ttl seconds give or take half a second.
    const iat = Math.round(now / 1000);
    const jti = newId();
    const scope = user.scope.join(' ');
    const exp = iat + options.accessTtlSeconds;
    const row: NewRefresh = {
      tokenHash: sha256(refresh),
      tenantId: req.tenantId,
      familyId,
      clientId: req.clientId,
      userId: user.userId,
      scope,
      staff: user.staff,
      expiresMs: now + options.refreshTtlMs,
      accessJti: jti,
      accessExpiresMs: exp * 1000,
    };
    return {
      row,
      answer: tokenResponse(req, { userId: user.userId, tenantId: req.tenantId, scope }, jti, iat, exp, refresh),
    };
  }

  async function newFamily(
    req: TenantRequest,
    user: { userId: string; scope: string[]; staff: boolean },
  ): Promise<TokenResponse> {
    const { row, answer } = issue(req, user, newId(), randomBytes(32).toString('base64url'), options.now());
    // The answer follows the store's commit (on the box, its fsync): a token handed out survives a power cut.
    await store.insertRefresh(row);
    return answer;
  }

  /**
   * The answer to a retry of a refresh: the same pair as the first time, when the spent token was used within
   * the grace, its successor is unused and the retry asks for the same scope. Undefined otherwise (reuse).
   */
  function retryAnswer(
    req: TenantRequest,
    spent: RefreshRow,
    next: RefreshRow | undefined,
    refresh: string,
    now: number,
  ): TokenResponse | undefined {
    const grace = options.refreshRetryGraceMs;
    if (grace <= 0 || spent.usedMs === null || now - spent.usedMs > grace) return undefined;
    if (!next || next.familyId !== spent.familyId || next.usedMs !== null || next.revoked) return undefined;
    if (next.accessJti === null || next.accessExpiresMs === null) return undefined;
    if (grantScope(req.form.get('scope'), spent.scope.split(' ')).join(' ') !== next.scope) return undefined;
    // The successor was issued in the transaction that spent this token, at its usedMs.
    const iat = Math.round(spent.usedMs / 1000);
    return tokenResponse(
      req,
      { userId: next.userId, tenantId: next.tenantId, scope: next.scope },
      next.accessJti,
      iat,
      next.accessExpiresMs / 1000,
      refresh,
    );
  }

  async function passwordGrant(req: TenantRequest): Promise<TokenResponse> {
    const username = req.form.get('username');
    const password = req.form.get('password');
    if (!username) throw new OAuthError('invalid_request', 'username is required');
    if (username === 'anonymous') {
      const { anonymous } = options;
      if (!anonymous) throw new OAuthError('invalid_grant', 'there is no anonymous user here');
      // The anonymous user's password is empty: `password=`, or no password field at all, which is what clients
      // that drop empty form values send (authlib: docs/api.md "Errors").
      if (password !== null && password !== '')
        throw new OAuthError('invalid_grant', 'the anonymous user has an empty password');
      const scope = grantScope(req.form.get('scope'), anonymous.scope);
      anonymous.admit(req.clientAddress);
      return newFamily(req, { userId: newId(), scope, staff: false });
    }
    // RFC 6749 4.3.2: a staff user's password is required.
    if (password === null) throw new OAuthError('invalid_request', 'password is required');
    // A device this user signed in on before is throttled on its own budget (docs/api.md "Sign-in throttling").
    const known = devices.deviceOf(req.tenantId, username, req.deviceTokens ?? []);
    const user = await credentials.checkPassword(req.tenantId, username, password, req.clientAddress, known);
    const scope = grantScope(req.form.get('scope'), user.scope.split(/\s+/));
    const answer = await newFamily(req, { userId: user.id, scope, staff: true });
    // Renewed on every sign-in (same device id, so the same budget): a device in use never reaches the expiry.
    return { ...answer, device_token: devices.issue(req.tenantId, username, known) };
  }

  async function refreshGrant(req: TenantRequest): Promise<TokenResponse> {
    const presented = req.form.get('refresh_token');
    if (!presented) throw new OAuthError('invalid_request', 'refresh_token is required');
    const refresh = successorOf(presented);
    const now = options.now();
    let answer: TokenResponse | undefined;
    const rotation = await store.rotate(
      req.tenantId,
      sha256(presented),
      sha256(refresh),
      now,
      (row, next): Rotation => {
        if (!row || row.tenantId !== req.tenantId || row.clientId !== req.clientId) {
          throw new OAuthError('invalid_grant', 'unknown refresh token');
        }
        if (row.revoked) throw new OAuthError('invalid_grant', 'refresh token revoked');
        if (row.expiresMs <= now) throw new OAuthError('invalid_grant', 'refresh token expired');
        if (row.usedMs !== null) {
          // A client retrying a refresh whose answer it lost gets that answer again, within the grace and only
          // while the new refresh token is unused. Any other second presentation is reuse of a spent token: it
          // leaked. Returned, not thrown, so that the store commits the family's revocation.
          answer = retryAnswer(req, row, next, refresh, now);
          return answer ? { kind: 'retry' } : { kind: 'reuse', spent: row };
        }
        const scope = grantScope(req.form.get('scope'), row.scope.split(' '));
        const issued = issue(req, { userId: row.userId, scope, staff: row.staff }, row.familyId, refresh, now);
        answer = issued.answer;
        return { kind: 'rotate', spent: row, next: issued.row };
      },
    );
    if (rotation.kind === 'reuse' || !answer)
      throw new OAuthError('invalid_grant', 'refresh token already used; its family is revoked');
    return answer;
  }

  /**
   * The request with its tenant: the one it names (x-tenant, or the per-tenant endpoint's path), else, for a
   * refresh, the tenant of the refresh token presented, which a generic client's automatic refresh sends without
   * x-tenant (docs/api.md "OAuth discovery"). The client is authenticated against that tenant next.
   */
  async function withTenant(req: TokenRequest): Promise<TenantRequest> {
    if (req.tenantId !== undefined) return { ...req, tenantId: req.tenantId };
    if (req.form.get('grant_type') !== 'refresh_token')
      throw new OAuthError('invalid_request', 'x-tenant header must be a tenant UUID');
    const presented = req.form.get('refresh_token');
    if (!presented) throw new OAuthError('invalid_request', 'refresh_token is required');
    const tenantId = await store.refreshTenant(sha256(presented));
    if (tenantId === undefined) throw new OAuthError('invalid_grant', 'unknown refresh token');
    return { ...req, tenantId };
  }

  return {
    /** The token endpoint's answer, or an OAuthError (RFC 6749 5.2). */
    async token(call: TokenRequest): Promise<TokenResponse> {
      const req = await withTenant(call);
      if (req.publicClient) {
        if (!options.publicClients?.includes(req.clientId))
          throw new OAuthError('invalid_client', 'client credentials are required');
      } else {
        await credentials.checkClient(req.tenantId, req.clientId, req.clientSecret, req.clientAddress);
      }
      const grant = req.form.get('grant_type');
      if (!grant) throw new OAuthError('invalid_request', 'grant_type is required');
      if (grant === 'password') return passwordGrant(req);
      if (grant === 'refresh_token') return refreshGrant(req);
      throw new OAuthError('unsupported_grant_type', `grant_type ${grant} is not supported`);
    },
  };
}

export type OAuthServer = ReturnType<typeof createOAuthServer>;
