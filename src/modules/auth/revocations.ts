import type { AuthRepo, Revocation, RevocationReason } from './repo.js';

/**
 * Access tokens revoked before their expiry: their refresh-token family was revoked, their staff user retired or
 * their OAuth client revoked (docs/api.md "Token revocation"). Every request, socket upgrade and socket push asks,
 * so the list lives in memory; SQLite holds the same rows so a restart forgets none. An entry is needed only until
 * the token's own `exp`, after which the signature check refuses it anyway.
 */
export function createRevocationList(repo: AuthRepo, now: () => number) {
  const revoked = new Map<string, { expiresMs: number; reason: RevocationReason }>();
  const listeners: ((rows: Revocation[]) => void)[] = [];
  const keyOf = (tenantId: string, jti: string): string => `${tenantId}\0${jti}`;
  // SQLite keeps no reason: after a restart no socket of the revoked token is open, and HTTP says `token revoked`.
  for (const row of repo.activeRevocations(now()))
    revoked.set(keyOf(row.tenantId, row.jti), { expiresMs: row.expiresMs, reason: row.reason });

  return {
    isRevoked: (tenantId: string, jti: string): boolean => revoked.has(keyOf(tenantId, jti)),
    /** Why the token was revoked (the socket's close reason), undefined while it stands. */
    reasonOf: (tenantId: string, jti: string): RevocationReason | undefined =>
      revoked.get(keyOf(tenantId, jti))?.reason,
    /** Call after the transaction that wrote the rows has committed; tells the listeners (the socket hub). */
    add(rows: Revocation[]): void {
      for (const row of rows)
        revoked.set(keyOf(row.tenantId, row.jti), { expiresMs: row.expiresMs, reason: row.reason });
      if (rows.length > 0) for (const listener of listeners) listener(rows);
    },
    /** Called with every batch added from now on: open sockets of those tokens close at once. */
    onAdd(listener: (rows: Revocation[]) => void): void {
      listeners.push(listener);
    },
    /** Drops entries of tokens that have expired, here and in SQLite; the number of rows removed. */
    prune(): number {
      const at = now();
      for (const [key, entry] of revoked) if (entry.expiresMs <= at) revoked.delete(key);
      return repo.deleteExpiredRevocations(at);
    },
    get size(): number {
      return revoked.size;
    },
  };
}

export type RevocationList = ReturnType<typeof createRevocationList>;
