import type { Db } from '../../db/open.js';

/** What a confirmed command's Idempotency-Key keeps: which command it was, and the 200 body it got. */
export interface StoredKey {
  tenantId: string;
  userId: string;
  key: string;
  fingerprint: string;
  correlationId: string;
  response: string;
  createdMs: number;
}

/** SQL of the idempotency keys (migration 0005). */
export function createIdempotencyRepo(db: Db) {
  const s = {
    find: db.prepare<[string, string, string], { fingerprint: string; response: string }>(
      'SELECT fingerprint, response FROM idempotency_keys WHERE tenant_id = ? AND user_id = ? AND idempotency_key = ?',
    ),
    insert: db.prepare(
      `INSERT INTO idempotency_keys (tenant_id, user_id, idempotency_key, fingerprint, correlation_id, response, created_ms)
       VALUES (@tenantId, @userId, @key, @fingerprint, @correlationId, @response, @createdMs)`,
    ),
    prune: db.prepare('DELETE FROM idempotency_keys WHERE created_ms < ?'),
  };
  return {
    find: (tenantId: string, userId: string, key: string) => s.find.get(tenantId, userId, key),
    /** Called inside the transaction that stores the command (command-queue.ts). */
    insert: (k: StoredKey) => s.insert.run(k),
    /** Removes keys stored before `beforeMs`; returns how many. */
    prune: (beforeMs: number): number => s.prune.run(beforeMs).changes,
  };
}
export type IdempotencyRepo = ReturnType<typeof createIdempotencyRepo>;
