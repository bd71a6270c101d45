import type { Queryable } from '../../db/pool.js';
import type { NewRefresh, RefreshRow } from '../../../shared/oauth/store.js';

interface RawRefresh {
  family_id: string;
  client_id: string;
  user_id: string;
  scope: string;
  expires_ms: string;
  used_ms: string | null;
  revoked: boolean;
  access_jti: string | null;
  access_expires_ms: string | null;
}

const msOrNull = (v: string | null): number | null => (v === null ? null : Number(v));

/** SQL of the central's refresh tokens and signing keys (clients and HQ users are the tenants module's). */
export function createAuthRepo(db: Queryable) {
  return {
    async insertRefresh(r: NewRefresh): Promise<void> {
      await db.query(
        `INSERT INTO refresh_tokens (tenant_id, token_hash, family_id, client_id, user_id, scope, expires_at, access_jti,
           access_expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, to_timestamp($7 / 1000.0), $8, to_timestamp($9 / 1000.0))`,
        [
          r.tenantId,
          r.tokenHash,
          r.familyId,
          r.clientId,
          r.userId,
          r.scope,
          r.expiresMs,
          r.accessJti,
          r.accessExpiresMs,
        ],
      );
    },
    /**
     * The tenant of a refresh token, for a refresh sent without x-tenant (docs/api.md "OAuth discovery"). The key
     * is (tenant_id, token_hash), so this scans: the central's refresh tokens are headquarters users' only, a few
     * rows a user, and a refresh comes once an hour per session.
     */
    async refreshTenant(tokenHash: string): Promise<string | undefined> {
      const { rows } = await db.query<{ tenant_id: string }>(
        'SELECT tenant_id FROM refresh_tokens WHERE token_hash = $1 LIMIT 1',
        [tokenHash],
      );
      return rows[0]?.tenant_id;
    },
    /** The row, locked for this transaction when `lock`: two refreshes with one token serialise here. */
    async refresh(tenantId: string, tokenHash: string, lock: boolean): Promise<RefreshRow | undefined> {
      const { rows } = await db.query<RawRefresh>(
        `SELECT family_id, client_id, user_id, scope, (extract(epoch FROM expires_at) * 1000)::bigint AS expires_ms,
                round(extract(epoch FROM used_at) * 1000)::bigint AS used_ms, revoked, access_jti,
                round(extract(epoch FROM access_expires_at) * 1000)::bigint AS access_expires_ms
         FROM refresh_tokens WHERE tenant_id = $1 AND token_hash = $2${lock ? ' FOR UPDATE' : ''}`,
        [tenantId, tokenHash],
      );
      const r = rows[0];
      return (
        r && {
          tokenHash,
          tenantId,
          familyId: r.family_id,
          clientId: r.client_id,
          userId: r.user_id,
          scope: r.scope,
          staff: true,
          expiresMs: Number(r.expires_ms),
          usedMs: msOrNull(r.used_ms),
          revoked: r.revoked,
          accessJti: r.access_jti,
          accessExpiresMs: msOrNull(r.access_expires_ms),
        }
      );
    },
    async markUsed(tenantId: string, tokenHash: string, nowMs: number): Promise<void> {
      await db.query(
        'UPDATE refresh_tokens SET used_at = to_timestamp($3 / 1000.0) WHERE tenant_id = $1 AND token_hash = $2',
        [tenantId, tokenHash, nowMs],
      );
    },
    async revokeFamily(tenantId: string, familyId: string): Promise<void> {
      await db.query('UPDATE refresh_tokens SET revoked = true WHERE tenant_id = $1 AND family_id = $2', [
        tenantId,
        familyId,
      ]);
    },
    async deleteExpired(): Promise<number> {
      return (await db.query('DELETE FROM refresh_tokens WHERE expires_at < now()')).rowCount ?? 0;
    },
    async newestSigningKey(): Promise<{ kid: string; secretKey: Buffer } | undefined> {
      const { rows } = await db.query<{ kid: string; secret_key: Buffer }>(
        'SELECT kid, secret_key FROM signing_keys ORDER BY created_at DESC, kid LIMIT 1',
      );
      return rows[0] && { kid: rows[0].kid, secretKey: rows[0].secret_key };
    },
    async insertSigningKey(kid: string, secretKey: Uint8Array): Promise<void> {
      await db.query('INSERT INTO signing_keys (kid, secret_key) VALUES ($1, $2)', [kid, Buffer.from(secretKey)]);
    },
    /** Serialises the callers' transactions on `key` until they end (central processes starting at once). */
    async lockTransaction(key: number): Promise<void> {
      await db.query('SELECT pg_advisory_xact_lock($1)', [key]);
    },
  };
}
