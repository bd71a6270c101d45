import type { Principal } from '../../../http/types.js';
import type { TokenResponse } from '../../../http/token-route.js';
import { createBearerCheck, type SigningKey } from '../../../shared/jwt.js';
import { createOAuthServer, type TokenRequest } from '../../../shared/oauth/server.js';
import type { OAuthStore } from '../../../shared/oauth/store.js';
import type { ThrottleOptions } from '../../../shared/oauth/throttle.js';
import { inTransaction, type Pool } from '../../db/pool.js';
import { createTenantRepo } from '../tenants/repo.js';
import { createAuthRepo } from './repo.js';

export interface AuthOptions {
  accessTtlSeconds: number;
  refreshTtlMs: number;
  /** A retry of the same refresh within this long gets the same pair (docs/api.md "Token revocation"). */
  refreshRetryGraceMs: number;
  throttle: ThrottleOptions;
  now: () => number;
}

/** The headquarters console's OAuth client: public (no secret), at the central's token endpoint only. */
export const HQ_CONSOLE_CLIENT = 'hq-console';

/**
 * The box's defaults (src/config.ts `auth`): 30 s of retry grace; 5 failed sign-ins per account and address, then
 * one per 10 s; 100 per account, 20 per address; two scrypt checks at once, 16 waiting.
 */
export const CENTRAL_AUTH_DEFAULTS: Pick<AuthOptions, 'refreshRetryGraceMs' | 'throttle'> = {
  refreshRetryGraceMs: 30_000,
  throttle: {
    accountAtAddress: { burst: 5, refillSeconds: 10 },
    account: { burst: 100, refillSeconds: 2 },
    address: { burst: 20, refillSeconds: 1 },
    maxConcurrentHashes: 2,
    maxQueuedHashes: 16,
  },
};

/**
 * The central's token endpoint for headquarters users: the one OAuth server (src/shared/oauth/server.ts) on the
 * central's PostgreSQL, with no anonymous user: everything here is headquarters' data.
 */
export function createCentralAuth(pool: Pool, key: SigningKey, options: AuthOptions) {
  const tenants = createTenantRepo(pool);
  const bearer = createBearerCheck(key, options.now);
  const store: OAuthStore = {
    clientSecretHash: (tenantId, clientId) => tenants.clientHash(tenantId, clientId),
    refreshTenant: (tokenHash) => createAuthRepo(pool).refreshTenant(tokenHash),
    async user(tenantId, username) {
      const user = await tenants.hqUser(tenantId, username);
      return user && { id: user.user_id, passwordHash: user.password_hash, scope: user.scope };
    },
    insertRefresh: (row) => createAuthRepo(pool).insertRefresh(row),
    rotate: (tenantId, presented, successor, nowMs, decide) =>
      inTransaction(pool, async (client) => {
        const repo = createAuthRepo(client);
        // The presented row first, locked: a retry racing the first refresh waits here and then sees its successor.
        const row = await repo.refresh(tenantId, presented, true);
        const rotation = decide(row, row && (await repo.refresh(tenantId, successor, false)));
        if (rotation.kind === 'rotate') {
          await repo.markUsed(tenantId, rotation.spent.tokenHash, nowMs);
          await repo.insertRefresh(rotation.next);
        }
        if (rotation.kind === 'reuse') await repo.revokeFamily(tenantId, rotation.spent.familyId);
        return rotation;
      }),
  };
  const oauth = createOAuthServer(store, key, { ...options, publicClients: [HQ_CONSOLE_CLIENT] });

  return {
    token: (req: TokenRequest): Promise<TokenResponse> => oauth.token(req),

    /** The key whose tokens every central process verifies: the one they sign with (docs/api.md "OAuth discovery"). */
    signingKeys: (): SigningKey[] => [key],
    tenantExists: (tenantId: string): Promise<boolean> => tenants.tenantExists(tenantId),

    /** Bearer-token check of every HQ route; throws a 401 AppError. */
    verify(token: string | undefined): Principal {
      const claims = bearer(token);
      const scope = claims.scope.split(' ');
      // Tokens are only issued to provisioned tenants, and tenants are never deleted.
      return {
        tenantId: claims.TENANT,
        userId: claims.UUID,
        scope,
        staff: true,
        expMs: claims.exp * 1000,
        jti: claims.jti,
      };
    },

    sweepExpired: (): Promise<number> => createAuthRepo(pool).deleteExpired(),
  };
}

export type CentralAuth = ReturnType<typeof createCentralAuth>;
