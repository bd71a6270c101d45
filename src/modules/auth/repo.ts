import type { Db } from '../../db/open.js';

export interface RefreshRow {
  tokenHash: string;
  tenantId: string;
  familyId: string;
  clientId: string;
  userId: string;
  scope: string;
  staff: boolean;
  expiresMs: number;
  usedMs: number | null;
  revoked: boolean;
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
}

/** SQL of the auth module: tenants' OAuth clients, staff users and refresh tokens. */
export function createAuthRepo(db: Db) {
  const tenantExists = db.prepare<[string], { id: string }>('SELECT id FROM tenants WHERE id = ?');
  const client = db.prepare<[string, string], { secret_hash: string }>(
    'SELECT secret_hash FROM oauth_clients WHERE tenant_id = ? AND client_id = ?',
  );
  const staff = db.prepare<[string, string], { id: string; password_hash: string; scope: string }>(
    'SELECT id, password_hash, scope FROM staff_users WHERE tenant_id = ? AND username = ?',
  );
  const insertRefresh = db.prepare(
    `INSERT INTO refresh_tokens (token_hash, tenant_id, family_id, client_id, user_id, scope, staff, expires_ms)
     VALUES (@tokenHash, @tenantId, @familyId, @clientId, @userId, @scope, @staff, @expiresMs)`,
  );
  const refresh = db.prepare<[string], RawRefresh>('SELECT * FROM refresh_tokens WHERE token_hash = ?');
  const markUsed = db.prepare<[number, string]>(
    'UPDATE refresh_tokens SET used_ms = ? WHERE token_hash = ? AND used_ms IS NULL',
  );
  const revokeFamily = db.prepare<[string, string]>(
    'UPDATE refresh_tokens SET revoked = 1 WHERE tenant_id = ? AND family_id = ?',
  );
  const deleteExpired = db.prepare<[number]>('DELETE FROM refresh_tokens WHERE expires_ms < ?');

  return {
    tenantExists: (tenantId: string): boolean => tenantExists.get(tenantId) !== undefined,
    clientSecretHash: (tenantId: string, clientId: string): string | undefined =>
      client.get(tenantId, clientId)?.secret_hash,
    staffUser: (tenantId: string, username: string) => staff.get(tenantId, username),
    insertRefresh: (row: Omit<RefreshRow, 'usedMs' | 'revoked'>): void => {
      insertRefresh.run({ ...row, staff: row.staff ? 1 : 0 });
    },
    refresh: (tokenHash: string): RefreshRow | undefined => {
      const r = refresh.get(tokenHash);
      if (!r) return undefined;
      return {
        tokenHash: r.token_hash, tenantId: r.tenant_id, familyId: r.family_id, clientId: r.client_id,
        userId: r.user_id, scope: r.scope, staff: r.staff === 1, expiresMs: r.expires_ms, usedMs: r.used_ms,
        revoked: r.revoked === 1,
      };
    },
    /** True when this call spent the token (single use even under a race). */
    markUsed: (tokenHash: string, nowMs: number): boolean => markUsed.run(nowMs, tokenHash).changes === 1,
    revokeFamily: (tenantId: string, familyId: string): void => {
      revokeFamily.run(tenantId, familyId);
    },
    deleteExpired: (beforeMs: number): number => deleteExpired.run(beforeMs).changes,
    transaction: <T>(fn: () => T): T => db.transaction(fn).immediate(),
  };
}

export type AuthRepo = ReturnType<typeof createAuthRepo>;
