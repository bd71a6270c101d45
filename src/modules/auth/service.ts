import type { Principal } from '../../http/types.js';
import type { TokenResponse } from '../../http/token-route.js';
import { unauthorized } from '../../shared/errors.js';
import { createBearerCheck, type SigningKey } from '../../shared/jwt.js';
import { createOAuthServer, type TokenRequest } from '../../shared/oauth/server.js';
import type { OAuthStore, Rotation } from '../../shared/oauth/store.js';
import type { ThrottleOptions } from '../../shared/oauth/throttle.js';
import { type AnonymousOptions, createAnonymousLimit } from './anonymous.js';
import type { DurableWrites } from '../../db/wal-sync.js';
import type { AuthRepo, Revocation } from './repo.js';
import { createRevocationList } from './revocations.js';

export type { TokenRequest };

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

const ANONYMOUS_SCOPE = ['read'];
const SWEEP_PAGE = 1000;

/**
 * The box's tokens: the one OAuth server (src/shared/oauth/server.ts) on the box's SQLite store, the anonymous
 * customer, and bearer-token verification with the revocation list.
 */
export function createAuthService(repo: AuthRepo, key: SigningKey, options: AuthOptions) {
  const revocations = createRevocationList(repo, options.now);
  const anonymousLimit = createAnonymousLimit(options.anonymous, options.now);
  const bearer = createBearerCheck(key, options.now);
  const durable: DurableWrites = options.durable ?? {
    transaction: (fn) => repo.transaction(fn),
    synced: () => Promise.resolve(),
  };

  // better-sqlite3's transactions are synchronous: each store call is one, then waits for the fsync (every answer
  // follows the fsync of what it wrote: a token handed out survives a power cut).
  const store: OAuthStore = {
    clientSecretHash: async (tenantId, clientId) =>
      repo.tenantExists(tenantId) ? repo.clientSecretHash(tenantId, clientId) : undefined,
    refreshTenant: async (tokenHash) => repo.refresh(tokenHash)?.tenantId,
    async user(tenantId, username) {
      const staff = repo.staffUser(tenantId, username);
      return staff && { id: staff.id, passwordHash: staff.password_hash, scope: staff.scope };
    },
    async insertRefresh(row) {
      durable.transaction(() => repo.insertRefresh(row));
      await durable.synced();
    },
    async rotate(_tenantId, presented, successor, nowMs, decide) {
      const { rotation, reused } = durable.transaction(() => {
        const rotation: Rotation = decide(repo.refresh(presented), repo.refresh(successor));
        if (rotation.kind === 'rotate') {
          // Single use even under a race: the row is spent by this transaction or not at all.
          if (!repo.markUsed(rotation.spent.tokenHash, nowMs))
            throw new Error('a refresh token spent twice in one transaction');
          repo.insertRefresh(rotation.next);
        }
        const reused =
          rotation.kind === 'reuse' ? repo.revokeFamily(rotation.spent.tenantId, rotation.spent.familyId, nowMs) : [];
        return { rotation, reused };
      }) as { rotation: Rotation; reused: Revocation[] };
      // A reused token's family is refused in memory at once, whatever becomes of the fsync.
      revocations.add(reused);
      await durable.synced();
      return rotation;
    },
  };
  const oauth = createOAuthServer(store, key, {
    accessTtlSeconds: options.accessTtlSeconds,
    refreshTtlMs: options.refreshTtlMs,
    refreshRetryGraceMs: options.refreshRetryGraceMs ?? 0,
    throttle: options.throttle,
    now: options.now,
    anonymous: { scope: ANONYMOUS_SCOPE, admit: (address) => anonymousLimit.take(address) },
  });

  return {
    token: (req: TokenRequest): Promise<TokenResponse> => oauth.token(req),

    /** The key whose tokens the box verifies: the one it signs with (docs/api.md "OAuth discovery"). */
    signingKeys: (): SigningKey[] => [key],
    tenantExists: (tenantId: string): boolean => repo.tenantExists(tenantId),

    /**
     * A staff user headquarters removed (docs/sync.md "Down: the catalogue"): call inside the transaction that removes
     * the user, then `noteRevoked` with the result after COMMIT. Their refresh tokens stop working at once.
     */
    revokeUserTokens: (tenantId: string, userId: string): Revocation[] =>
      repo.revokeUser(tenantId, userId, options.now()),
    /** As revokeUserTokens, for the OAuth clients headquarters revoked (gone from the box in this transaction). */
    revokeGoneClientTokens: (tenantId: string): Revocation[] => repo.revokeGoneClients(tenantId, options.now()),
    noteRevoked: (rows: Revocation[]): void => revocations.add(rows),
    /**
     * Every revocation from now on, after its commit: the socket hub closes the sockets of those tokens at once
     * (docs/api.md "The socket").
     */
    onRevoked: (listener: (rows: Revocation[]) => void): void => revocations.onAdd(listener),
    /** Why this token was revoked, undefined while it stands: checked in memory before every socket push. */
    revokedReason: (principal: Pick<Principal, 'tenantId' | 'jti'>): string | undefined =>
      revocations.reasonOf(principal.tenantId, principal.jti),

    /** Bearer-token check for every API call and the socket; throws a 401 AppError. */
    verify(token: string | undefined): Principal {
      const claims = bearer(token);
      if (!repo.tenantExists(claims.TENANT)) throw unauthorized('unknown tenant');
      if (revocations.isRevoked(claims.TENANT, claims.jti)) throw unauthorized('token revoked');
      const scope = claims.scope.split(' ');
      return {
        tenantId: claims.TENANT,
        userId: claims.UUID,
        scope,
        staff: scope.includes('write'),
        expMs: claims.exp * 1000,
        jti: claims.jti,
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
        idleAnonymous += repo.transaction(() =>
          page
            .filter((f) => !hasOrder(f.tenantId, f.userId))
            .reduce((n, f) => n + repo.deleteFamily(f.tenantId, f.familyId), 0),
        );
        after = page.at(-1)!;
      }
      return { refreshTokens, idleAnonymous, revocations: revocations.prune() };
    },
  };
}

export type AuthService = ReturnType<typeof createAuthService>;
