import { createHash, createHmac, randomBytes } from 'node:crypto';
import type { Principal } from '../../http/types.js';
import type { TokenCall, TokenResponse } from '../../http/token-route.js';
import { unauthorized } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import { createBearerCheck, type SigningKey, signJwt } from '../../shared/jwt.js';
import { OAuthError } from '../../shared/oauth-error.js';
import { type AnonymousOptions, createAnonymousLimit } from './anonymous.js';
import { createCredentialChecks } from './credentials.js';
import type { DurableWrites } from '../../db/wal-sync.js';
import type { AuthRepo, RefreshRow, Revocation } from './repo.js';
import { createRevocationList } from './revocations.js';
import { createLoginThrottle, type ThrottleOptions } from './throttle.js';


export interface TokenRequest extends TokenCall {
  /** The client's address as the throttle keys it (throttleAddress of the peer IP). */
  clientAddress: string;
}

export interface AuthOptions {
  accessTtlSeconds: number;
  refreshTtlMs: number;
  throttle: ThrottleOptions;
  anonymous: AnonymousOptions;
  /**
   * How long after a refresh the same refresh token may be presented again and get the same answer (a client
   * retrying after a lost response); absent or 0: never, any second presentation is reuse.
   */
  refreshRetryGraceMs?: number;
  now: () => number;
  /**
   * How token writes reach the disk: absent, each commits with its own fsync on the event loop; the box commits
   * them without one and answers after an fsync off the loop (src/db/wal-sync.ts).
   */
  durable?: DurableWrites;
}

/** Whether any order lists the user (the ordering module answers; wired in src/jobs.ts). */
export type UserHasOrder = (tenantId: string, userId: string) => boolean;

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');
const ANONYMOUS_SCOPE = ['read'];
const SWEEP_PAGE = 1000;

/** Token issue (password and refresh grants) and bearer-token verification. */
export function createAuthService(repo: AuthRepo, key: SigningKey, options: AuthOptions) {
  const credentials = createCredentialChecks(repo, createLoginThrottle(options.throttle, options.now));
  const revocations = createRevocationList(repo, options.now);
  const anonymousLimit = createAnonymousLimit(options.anonymous, options.now);
  const bearer = createBearerCheck(key, options.now);
  const durable: DurableWrites = options.durable ?? { transaction: (fn) => repo.transaction(fn), synced: () => Promise.resolve() };

  function grantScope(requested: string | null, allowed: string[]): string[] {
    if (requested === null || requested.trim() === '') return allowed;
    const wanted = [...new Set(requested.trim().split(/\s+/))];
    const extra = wanted.filter((s) => !allowed.includes(s));
    if (extra.length > 0) throw new OAuthError('invalid_scope', `scope not allowed: ${extra.join(' ')}`);
    return allowed.filter((s) => wanted.includes(s));
  }

  // A refresh grant's new refresh token is derived from the one presented (HMAC under a key of the box), not
  // drawn at random: a retry of the same refresh within the grace derives it again, and its access token is
  // signed again from the successor row's claims (Ed25519 signatures are deterministic), so the retry gets the
  // identical pair while no usable secret is ever stored, only hashes and claims (docs/api.md "Token revocation").
  const successorKey = createHmac('sha256', key.secretKey).update('venue-box refresh successor v1').digest();
  const successorOf = (presented: string): string =>
    createHmac('sha256', successorKey).update(presented).digest('base64url');

  /** The Token response; the same claims and refresh token always give the same bytes. */
  function tokenResponse(user: { userId: string; tenantId: string; scope: string }, jti: string, iat: number, exp: number,
    refresh: string): TokenResponse {
    const access = signJwt(key, { UUID: user.userId, TENANT: user.tenantId, scope: user.scope, jti, iat, exp });
    return {
      access_token: access, token_type: 'bearer', refresh_token: refresh, expires_in: exp - iat,
      scope: user.scope, UUID: user.userId, TENANT: user.tenantId, jti,
    };
  }

  function issue(
    req: TokenRequest,
    user: { userId: string; scope: string[]; staff: boolean },
    familyId: string,
    refresh = randomBytes(32).toString('base64url'),
    now = options.now(),
  ): TokenResponse {
    // Claims are whole seconds. Rounded down, a token issued at x.999 s would live ttl - 0.999 s (a 1-second
    // token 1 ms, refused at once); rounded to the nearest second it lives ttl seconds give or take half a second.
    const iat = Math.round(now / 1000);
    const jti = newId();
    const scope = user.scope.join(' ');
    const exp = iat + options.accessTtlSeconds;
    // The refresh row names the access token issued with it, so revoking the family can revoke that too.
    repo.insertRefresh({
      tokenHash: sha256(refresh), tenantId: req.tenantId, familyId, clientId: req.clientId,
      userId: user.userId, scope, staff: user.staff, expiresMs: now + options.refreshTtlMs,
      accessJti: jti, accessExpiresMs: exp * 1000,
    });
    return tokenResponse({ userId: user.userId, tenantId: req.tenantId, scope }, jti, iat, exp, refresh);
  }

  /**
   * The answer to a retry of a refresh: the same pair as the first time, when the spent token was used within
   * the grace, its successor is unused and the retry asks for the same scope. Undefined otherwise (reuse).
   */
  function retryAnswer(req: TokenRequest, spent: RefreshRow, presented: string, now: number): TokenResponse | undefined {
    const grace = options.refreshRetryGraceMs ?? 0;
    if (grace <= 0 || spent.usedMs === null || now - spent.usedMs > grace) return undefined;
    const refresh = successorOf(presented);
    const next = repo.refresh(sha256(refresh));
    if (!next || next.familyId !== spent.familyId || next.usedMs !== null || next.revoked) return undefined;
    if (next.accessJti === null || next.accessExpiresMs === null) return undefined;
    if (grantScope(req.form.get('scope'), spent.scope.split(' ')).join(' ') !== next.scope) return undefined;
    // The successor was issued in the transaction that spent this token, at its usedMs.
    const iat = Math.round(spent.usedMs / 1000);
    return tokenResponse({ userId: next.userId, tenantId: next.tenantId, scope: next.scope }, next.accessJti, iat,
      next.accessExpiresMs / 1000, refresh);
  }

  async function passwordGrant(req: TokenRequest): Promise<TokenResponse> {
    const username = req.form.get('username');
    const password = req.form.get('password');
    if (!username) throw new OAuthError('invalid_request', 'username is required');
    // RFC 6749 4.3.2: password is required; the anonymous user sends it empty (`password=`).
    if (password === null) throw new OAuthError('invalid_request', 'password is required');
    if (username === 'anonymous') {
      if (password !== '') throw new OAuthError('invalid_grant', 'the anonymous user has an empty password');
      const scope = grantScope(req.form.get('scope'), ANONYMOUS_SCOPE);
      anonymousLimit.take(req.clientAddress);
      return durable.transaction(() => issue(req, { userId: newId(), scope, staff: false }, newId()));
    }
    const staff = await credentials.checkPassword(req.tenantId, username, password, req.clientAddress);
    const scope = grantScope(req.form.get('scope'), staff.scope.split(/\s+/));
    return durable.transaction(() => issue(req, { userId: staff.id, scope, staff: true }, newId()));
  }

  function refreshGrant(req: TokenRequest): TokenResponse | { reused: Revocation[] } {
    const presented = req.form.get('refresh_token');
    if (!presented) throw new OAuthError('invalid_request', 'refresh_token is required');
    return durable.transaction(() => {
      const row = repo.refresh(sha256(presented));
      if (!row || row.tenantId !== req.tenantId || row.clientId !== req.clientId) {
        throw new OAuthError('invalid_grant', 'unknown refresh token');
      }
      if (row.revoked) throw new OAuthError('invalid_grant', 'refresh token revoked');
      const now = options.now();
      if (row.expiresMs <= now) throw new OAuthError('invalid_grant', 'refresh token expired');
      if (row.usedMs !== null || !repo.markUsed(row.tokenHash, now)) {
        // A client retrying a refresh whose answer it lost gets that answer again, within the grace and only
        // while the new refresh token is unused.
        const retry = retryAnswer(req, row, presented, now);
        if (retry) return retry;
        // Any other second presentation is reuse of a spent token: it leaked. Revoke the whole family (OAuth 2.0
        // Security BCP 4.14), with the access tokens already issued to it. Returned, not thrown, so the
        // revocation commits.
        return { reused: repo.revokeFamily(row.tenantId, row.familyId, now) };
      }
      const scope = grantScope(req.form.get('scope'), row.scope.split(' '));
      return issue(req, { userId: row.userId, scope, staff: row.staff }, row.familyId, successorOf(presented), now);
    }) as TokenResponse | { reused: Revocation[] };
  }

  return {
    async token(req: TokenRequest): Promise<TokenResponse> {
      await credentials.checkClient(req.tenantId, req.clientId, req.clientSecret, req.clientAddress);
      const grant = req.form.get('grant_type');
      if (!grant) throw new OAuthError('invalid_request', 'grant_type is required');
      // Every answer follows the fsync of what it wrote: a token handed out survives a power cut.
      if (grant === 'password') {
        const answer = await passwordGrant(req);
        await durable.synced();
        return answer;
      }
      if (grant === 'refresh_token') {
        const result = refreshGrant(req);
        // A reused token's family is refused in memory at once, whatever becomes of the fsync.
        if ('reused' in result) revocations.add(result.reused);
        await durable.synced();
        if ('reused' in result) throw new OAuthError('invalid_grant', 'refresh token already used; its family is revoked');
        return result;
      }
      throw new OAuthError('unsupported_grant_type', `grant_type ${grant} is not supported`);
    },

    /**
     * A staff user headquarters removed (docs/sync.md "Down: the catalogue"): call inside the transaction that removes
     * the user, then `noteRevoked` with the result after COMMIT. Their refresh tokens stop working at once.
     */
    revokeUserTokens: (tenantId: string, userId: string): Revocation[] => repo.revokeUser(tenantId, userId, options.now()),
    noteRevoked: (rows: Revocation[]): void => revocations.add(rows),

    /** Bearer-token check for every API call and the socket; throws a 401 AppError. */
    verify(token: string | undefined): Principal {
      const claims = bearer(token);
      if (!repo.tenantExists(claims.TENANT)) throw unauthorized('unknown tenant');
      if (revocations.isRevoked(claims.TENANT, claims.jti)) throw unauthorized('token revoked');
      const scope = claims.scope.split(' ');
      return {
        tenantId: claims.TENANT, userId: claims.UUID, scope, staff: scope.includes('write'),
        expMs: claims.exp * 1000, jti: claims.jti,
      };
    },

    /**
     * Removes refresh tokens past their expiry (a spent token is kept until then for reuse detection),
     * revocations of access tokens that have expired anyway, and the refresh tokens of idle anonymous users
     * with no order: the refresh family's newest token is older than `anonymous.idleRefreshMs`, and
     * `hasOrder` says no order lists the user. Anonymous tokens are free, so most users who never order are
     * forgotten within a day instead of keeping a row for weeks; a user with an order keeps the full lifetime.
     */
    sweepExpired(hasOrder: UserHasOrder): { refreshTokens: number; idleAnonymous: number; revocations: number } {
      const now = options.now();
      const refreshTokens = repo.deleteExpired(now);
      // Rows keep no issue time: a row was issued refreshTtlMs before it expires.
      const expiresBefore = now - options.anonymous.idleRefreshMs + options.refreshTtlMs;
      let idleAnonymous = 0;
      let after = { tenantId: '', familyId: '' };
      for (;;) {
        const page = repo.idleAnonymousFamilies(expiresBefore, after, SWEEP_PAGE);
        if (page.length === 0) break;
        idleAnonymous += repo.transaction(() => page
          .filter((f) => !hasOrder(f.tenantId, f.userId))
          .reduce((n, f) => n + repo.deleteFamily(f.tenantId, f.familyId), 0));
        after = page.at(-1)!;
      }
      return { refreshTokens, idleAnonymous, revocations: revocations.prune() };
    },
  };
}

export type AuthService = ReturnType<typeof createAuthService>;
