import type { AuthRepo } from './repo.js';

/**
 * Access tokens revoked before their expiry (their refresh-token family was revoked). Every request and socket
 * upgrade asks, so the list lives in memory; SQLite holds the same rows so a restart forgets none. An entry is
 * needed only until the token's own `exp`, after which the signature check refuses it anyway.
 */
export function createRevocationList(repo: AuthRepo, now: () => number) {
  const revoked = new Map<string, number>();
  const keyOf = (tenantId: string, jti: string): string => `${tenantId}\0${jti}`;
  for (const row of repo.activeRevocations(now())) revoked.set(keyOf(row.tenantId, row.jti), row.expiresMs);

  return {
    isRevoked: (tenantId: string, jti: string): boolean => revoked.has(keyOf(tenantId, jti)),
    /** Call after the transaction that wrote the rows has committed. */
    add(rows: { tenantId: string; jti: string; expiresMs: number }[]): void {
      for (const row of rows) revoked.set(keyOf(row.tenantId, row.jti), row.expiresMs);
    },
    /** Drops entries of tokens that have expired, here and in SQLite; the number of rows removed. */
    prune(): number {
      const at = now();
      for (const [key, expiresMs] of revoked) if (expiresMs <= at) revoked.delete(key);
      return repo.deleteExpiredRevocations(at);
    },
    get size(): number {
      return revoked.size;
    },
  };
}

export type RevocationList = ReturnType<typeof createRevocationList>;
