import { createHash, randomBytes } from 'node:crypto';
import type { Principal } from '../../../http/types.js';
import type { TokenCall, TokenResponse } from '../../../http/token-route.js';
import { newId } from '../../../shared/ids.js';
import { createBearerCheck, type SigningKey, signJwt } from '../../../shared/jwt.js';
import { OAuthError } from '../../../shared/oauth-error.js';
import { verifySecret } from '../../../shared/passwords.js';
import { inTransaction, type Pool, type Queryable } from '../../db/pool.js';
import { createTenantRepo } from '../tenants/repo.js';
import { createAuthRepo } from './repo.js';


export type TokenRequest = TokenCall;

export interface AuthOptions {
  accessTtlSeconds: number;
  refreshTtlMs: number;
  now: () => number;
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');
const DUMMY_HASH = 'scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';

/**
 * The central's token endpoint for headquarters users: the box's shape (password and refresh grants, rotation,
 * reuse revokes the family), but no anonymous user: everything here is headquarters' data.
 */
export function createCentralAuth(pool: Pool, key: SigningKey, options: AuthOptions) {
  const tenants = createTenantRepo(pool);
  const bearer = createBearerCheck(key, options.now);

  async function checkClient(req: TokenRequest): Promise<void> {
    const stored = await tenants.clientHash(req.tenantId, req.clientId);
    if (!stored || !(await verifySecret(req.clientSecret, stored))) {
      throw new OAuthError('invalid_client', 'unknown client or wrong client secret for this tenant');
    }
  }

  function grantScope(requested: string | null, allowed: string[]): string[] {
    if (requested === null || requested.trim() === '') return allowed;
    const wanted = [...new Set(requested.trim().split(/\s+/))];
    const extra = wanted.filter((s) => !allowed.includes(s));
    if (extra.length > 0) throw new OAuthError('invalid_scope', `scope not allowed: ${extra.join(' ')}`);
    return allowed.filter((s) => wanted.includes(s));
  }

  async function issue(db: Queryable, req: TokenRequest, user: { userId: string; scope: string[] }, familyId: string): Promise<TokenResponse> {
    const now = options.now();
    const iat = Math.round(now / 1000);
    const jti = newId();
    const scope = user.scope.join(' ');
    const access = signJwt(key, { UUID: user.userId, TENANT: req.tenantId, scope, jti, iat, exp: iat + options.accessTtlSeconds });
    const refresh = randomBytes(32).toString('base64url');
    await createAuthRepo(db).insertRefresh({
      tokenHash: sha256(refresh), tenantId: req.tenantId, familyId, clientId: req.clientId, userId: user.userId, scope,
      expiresMs: now + options.refreshTtlMs,
    });
    return {
      access_token: access, token_type: 'bearer', refresh_token: refresh, expires_in: options.accessTtlSeconds,
      scope, UUID: user.userId, TENANT: req.tenantId, jti,
    };
  }

  async function passwordGrant(req: TokenRequest): Promise<TokenResponse> {
    const username = req.form.get('username');
    const password = req.form.get('password');
    if (!username) throw new OAuthError('invalid_request', 'username is required');
    // RFC 6749 4.3.2: password is required; the anonymous user sends it empty (`password=`).
    if (password === null) throw new OAuthError('invalid_request', 'password is required');
    if (username === 'anonymous') throw new OAuthError('invalid_grant', 'the central has no anonymous user');
    const user = await tenants.hqUser(req.tenantId, username);
    // A dummy hash for an unknown user, so timing does not reveal usernames.
    const ok = await verifySecret(password, user?.password_hash ?? DUMMY_HASH);
    if (!user || !ok) throw new OAuthError('invalid_grant', 'wrong username or password');
    return issue(pool, req, { userId: user.user_id, scope: grantScope(req.form.get('scope'), user.scope.split(/\s+/)) }, newId());
  }

  async function refreshGrant(req: TokenRequest): Promise<TokenResponse> {
    const presented = req.form.get('refresh_token');
    if (!presented) throw new OAuthError('invalid_request', 'refresh_token is required');
    const result = await inTransaction(pool, async (client) => {
      const repo = createAuthRepo(client);
      const row = await repo.refreshForUpdate(req.tenantId, sha256(presented));
      if (!row || row.clientId !== req.clientId) throw new OAuthError('invalid_grant', 'unknown refresh token');
      if (row.revoked) throw new OAuthError('invalid_grant', 'refresh token revoked');
      if (row.expiresMs <= options.now()) throw new OAuthError('invalid_grant', 'refresh token expired');
      if (row.used) {
        // Reuse of a spent token means it leaked: revoke the whole family (OAuth 2.0 Security BCP 4.14).
        // The revocation must commit, so it is returned rather than thrown.
        await repo.revokeFamily(row.tenantId, row.familyId);
        return undefined;
      }
      await repo.markUsed(row.tenantId, row.tokenHash);
      const scope = grantScope(req.form.get('scope'), row.scope.split(' '));
      return issue(client, req, { userId: row.userId, scope }, row.familyId);
    });
    if (!result) throw new OAuthError('invalid_grant', 'refresh token already used; its family is revoked');
    return result;
  }

  return {
    async token(req: TokenRequest): Promise<TokenResponse> {
      await checkClient(req);
      const grant = req.form.get('grant_type');
      if (!grant) throw new OAuthError('invalid_request', 'grant_type is required');
      if (grant === 'password') return passwordGrant(req);
      if (grant === 'refresh_token') return refreshGrant(req);
      throw new OAuthError('unsupported_grant_type', `grant_type ${grant} is not supported`);
    },

    /** Bearer-token check of every HQ route; throws a 401 AppError. */
    verify(token: string | undefined): Principal {
      const claims = bearer(token);
      const scope = claims.scope.split(' ');
      // Tokens are only issued to provisioned tenants, and tenants are never deleted.
      return { tenantId: claims.TENANT, userId: claims.UUID, scope, staff: true, expMs: claims.exp * 1000, jti: claims.jti };
    },

    sweepExpired: (): Promise<number> => createAuthRepo(pool).deleteExpired(),
  };
}

export type CentralAuth = ReturnType<typeof createCentralAuth>;
