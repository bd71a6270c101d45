import type { Queryable } from '../../db/pool.js';

export interface RefreshRow {
  tokenHash: string;
  tenantId: string;
  familyId: string;
  clientId: string;
  userId: string;
  scope: string;
  expiresMs: number;
  used: boolean;
  revoked: boolean;
}

/** SQL of the central's refresh tokens (clients and HQ users are the tenants module's). */
export function createAuthRepo(db: Queryable) {
  return {
    async insertRefresh(r: Omit<RefreshRow, 'used' | 'revoked'>): Promise<void> {
      await db.query(
        `INSERT INTO refresh_tokens (tenant_id, token_hash, family_id, client_id, user_id, scope, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, to_timestamp($7 / 1000.0))`,
        [r.tenantId, r.tokenHash, r.familyId, r.clientId, r.userId, r.scope, r.expiresMs],
      );
    },
    /** The row, locked for this transaction: two refreshes with one token serialise here. */
    async refreshForUpdate(tenantId: string, tokenHash: string): Promise<RefreshRow | undefined> {
      const { rows } = await db.query<{
        family_id: string; client_id: string; user_id: string; scope: string; expires_ms: number; used: boolean; revoked: boolean;
      }>(
        `SELECT family_id, client_id, user_id, scope, (extract(epoch FROM expires_at) * 1000)::bigint AS expires_ms,
                used_at IS NOT NULL AS used, revoked
         FROM refresh_tokens WHERE tenant_id = $1 AND token_hash = $2 FOR UPDATE`,
        [tenantId, tokenHash],
      );
      const r = rows[0];
      return r && {
        tokenHash, tenantId, familyId: r.family_id, clientId: r.client_id, userId: r.user_id, scope: r.scope,
        expiresMs: r.expires_ms, used: r.used, revoked: r.revoked,
      };
    },
    async markUsed(tenantId: string, tokenHash: string): Promise<void> {
      await db.query('UPDATE refresh_tokens SET used_at = now() WHERE tenant_id = $1 AND token_hash = $2', [tenantId, tokenHash]);
    },
    async revokeFamily(tenantId: string, familyId: string): Promise<void> {
      await db.query('UPDATE refresh_tokens SET revoked = true WHERE tenant_id = $1 AND family_id = $2', [tenantId, familyId]);
    },
    async deleteExpired(): Promise<number> {
      return (await db.query('DELETE FROM refresh_tokens WHERE expires_at < now()')).rowCount ?? 0;
    },
  };
}
