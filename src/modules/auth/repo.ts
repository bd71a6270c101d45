import { type Db, inTransaction } from '../../db/open.js';
import type { NewRefresh, RefreshRow } from '../../shared/oauth/store.js';

/** Why an access token was revoked: the 4001 close reason of its sockets (docs/api.md "Token revocation"). */
export type RevocationReason = 'token revoked' | 'user retired' | 'client revoked';

export interface Revocation {
  tenantId: string;
  jti: string;
  expiresMs: number;
  reason: RevocationReason;
}

interface RawRefresh {
  token_hash: string;
  tenant_id: string;
  family_id: string;
  client_id: string;
  user_id: string;
  scope: string;
  staff: number;
  expires_ms: number;
  used_ms: number | null;
  revoked: number;
  access_jti: string | null;
  access_expires_ms: number | null;
}

/** SQL of the auth module: tenants' OAuth clients, staff users, refresh tokens and revoked access tokens. */
export function createAuthRepo(db: Db) {
  const tx = inTransaction(db);
  const tenantExists = db.prepare<[string], { id: string }>('SELECT id FROM tenants WHERE id = ?');
  const knownTenants = new Set<string>();
  const client = db.prepare<[string, string], { secret_hash: string }>(
    'SELECT secret_hash FROM oauth_clients WHERE tenant_id = ? AND client_id = ?',
  );
  const staff = db.prepare<[string, string], { id: string; password_hash: string; scope: string }>(
    'SELECT id, password_hash, scope FROM staff_users WHERE tenant_id = ? AND username = ?',
  );
  const insertRefresh = db.prepare(
    `INSERT INTO refresh_tokens (token_hash, tenant_id, family_id, client_id, user_id, scope, staff, expires_ms,
       access_jti, access_expires_ms)
     VALUES (@tokenHash, @tenantId, @familyId, @clientId, @userId, @scope, @staff, @expiresMs, @accessJti,
       @accessExpiresMs)`,
  );
  const refresh = db.prepare<[string], RawRefresh>('SELECT * FROM refresh_tokens WHERE token_hash = ?');
  const markUsed = db.prepare<[number, string]>(
    'UPDATE refresh_tokens SET used_ms = ? WHERE token_hash = ? AND used_ms IS NULL',
  );
  const revokeFamily = db.prepare<[string, string]>(
    'UPDATE refresh_tokens SET revoked = 1 WHERE tenant_id = ? AND family_id = ?',
  );
  const deleteExpired = db.prepare<[number]>('DELETE FROM refresh_tokens WHERE expires_ms < ?');
  // Anonymous (staff = 0) refresh families whose newest token expires before @before, one page after the
  // (tenant, family) given; every row of a family names the same user.
  const idleAnonymous = db.prepare<
    [{ before: number; tenantId: string; familyId: string; limit: number }],
    { tenant_id: string; family_id: string; user_id: string }
  >(
    `SELECT tenant_id, family_id, MIN(user_id) AS user_id FROM refresh_tokens
     WHERE staff = 0 AND (tenant_id, family_id) > (@tenantId, @familyId)
     GROUP BY tenant_id, family_id HAVING MAX(expires_ms) < @before
     ORDER BY tenant_id, family_id LIMIT +@limit`,
  );
  const deleteFamily = db.prepare<[string, string]>('DELETE FROM refresh_tokens WHERE tenant_id = ? AND family_id = ?');
  // The access tokens still alive of the refresh rows `which` selects (a family, a user, the clients gone): each
  // row names the one issued with it.
  const revokeAccessOf = (which: string) =>
    db.prepare<
      [{ nowMs: number; tenantId: string; key?: string }],
      { tenant_id: string; jti: string; expires_ms: number }
    >(
      `INSERT OR IGNORE INTO token_revocations (tenant_id, jti, family_id, expires_ms, revoked_ms)
     SELECT tenant_id, access_jti, family_id, access_expires_ms, @nowMs FROM refresh_tokens
     WHERE tenant_id = @tenantId AND ${which} AND access_jti IS NOT NULL AND access_expires_ms > @nowMs
     RETURNING tenant_id, jti, expires_ms`,
    );
  const revokeAccess = revokeAccessOf('family_id = @key');
  // A staff user removed by headquarters (docs/sync.md "Down: the catalogue"): every family of theirs, and the access
  // tokens issued to them that are still alive.
  const revokeUser = db.prepare<[string, string]>(
    'UPDATE refresh_tokens SET revoked = 1 WHERE tenant_id = ? AND user_id = ?',
  );
  const revokeUserAccess = revokeAccessOf('user_id = @key');
  // Clients headquarters revoked (docs/sync.md "Down: the catalogue") are gone from oauth_clients: the tokens
  // issued through them. Rare (a client retired, a snapshot), so a scan of the tenant's refresh rows is fine.
  const goneClient = 'client_id NOT IN (SELECT client_id FROM oauth_clients WHERE tenant_id = @tenantId)';
  const revokeGoneClients = db.prepare<[{ tenantId: string }]>(
    `UPDATE refresh_tokens SET revoked = 1 WHERE tenant_id = @tenantId AND revoked = 0 AND ${goneClient}`,
  );
  const revokeGoneClientsAccess = revokeAccessOf(goneClient);
  const activeRevocations = db.prepare<[number], { tenant_id: string; jti: string; expires_ms: number }>(
    'SELECT tenant_id, jti, expires_ms FROM token_revocations WHERE expires_ms > ?',
  );
  const deleteRevocations = db.prepare<[number]>('DELETE FROM token_revocations WHERE expires_ms <= ?');
  const toRevocation =
    (reason: RevocationReason) =>
    (r: { tenant_id: string; jti: string; expires_ms: number }): Revocation => ({
      tenantId: r.tenant_id,
      jti: r.jti,
      expiresMs: r.expires_ms,
      reason,
    });

  return {
    /**
     * Every authenticated request asks. A tenant, once on the box, stays (provisioning adds or renames one, nothing
     * removes one), so a yes is kept in memory; a no is asked again, as a tenant may be provisioned any time.
     */
    tenantExists(tenantId: string): boolean {
      if (knownTenants.has(tenantId)) return true;
      const found = tenantExists.get(tenantId) !== undefined;
      if (found) knownTenants.add(tenantId);
      return found;
    },
    clientSecretHash: (tenantId: string, clientId: string): string | undefined =>
      client.get(tenantId, clientId)?.secret_hash,
    staffUser: (tenantId: string, username: string) => staff.get(tenantId, username),
    insertRefresh: (row: NewRefresh): void => {
      insertRefresh.run({ ...row, staff: row.staff ? 1 : 0 });
    },
    refresh: (tokenHash: string): RefreshRow | undefined => {
      const r = refresh.get(tokenHash);
      if (!r) return undefined;
      return {
        tokenHash: r.token_hash,
        tenantId: r.tenant_id,
        familyId: r.family_id,
        clientId: r.client_id,
        userId: r.user_id,
        scope: r.scope,
        staff: r.staff === 1,
        expiresMs: r.expires_ms,
        usedMs: r.used_ms,
        revoked: r.revoked === 1,
        accessJti: r.access_jti,
        accessExpiresMs: r.access_expires_ms,
      };
    },
    /** True when this call spent the token (single use even under a race). */
    markUsed: (tokenHash: string, nowMs: number): boolean => markUsed.run(nowMs, tokenHash).changes === 1,
    /** Revokes the family's refresh tokens and its access tokens not yet expired; returns the latter. */
    revokeFamily: (tenantId: string, familyId: string, nowMs: number): Revocation[] => {
      revokeFamily.run(tenantId, familyId);
      return revokeAccess.all({ nowMs, tenantId, key: familyId }).map(toRevocation('token revoked'));
    },
    /** Revokes every refresh-token family of the user and their access tokens not yet expired; returns the latter. */
    revokeUser: (tenantId: string, userId: string, nowMs: number): Revocation[] => {
      revokeUser.run(tenantId, userId);
      return revokeUserAccess.all({ nowMs, tenantId, key: userId }).map(toRevocation('user retired'));
    },
    /** Revokes the refresh tokens of clients the tenant no longer has, and their access tokens not yet expired. */
    revokeGoneClients: (tenantId: string, nowMs: number): Revocation[] => {
      revokeGoneClients.run({ tenantId });
      return revokeGoneClientsAccess.all({ nowMs, tenantId }).map(toRevocation('client revoked'));
    },
    activeRevocations: (nowMs: number): Revocation[] => activeRevocations.all(nowMs).map(toRevocation('token revoked')),
    deleteExpiredRevocations: (nowMs: number): number => deleteRevocations.run(nowMs).changes,
    deleteExpired: (beforeMs: number): number => deleteExpired.run(beforeMs).changes,
    idleAnonymousFamilies: (expiresBefore: number, after: { tenantId: string; familyId: string }, limit: number) =>
      idleAnonymous
        .all({ before: expiresBefore, ...after, limit })
        .map((r) => ({ tenantId: r.tenant_id, familyId: r.family_id, userId: r.user_id })),
    deleteFamily: (tenantId: string, familyId: string): number => deleteFamily.run(tenantId, familyId).changes,
    transaction: <T>(fn: () => T): T => tx.immediate(fn),
  };
}

export type AuthRepo = ReturnType<typeof createAuthRepo>;
