import Database from 'better-sqlite3';
import { expect, test } from 'vitest';
import { migrate, MIGRATIONS } from '../migrate.js';
import { migration0006 } from './0006-token-revocations.js';

test('0006 adds the revocation list to a version-5 database and keeps its refresh tokens', () => {
  const db = new Database(':memory:');
  db.pragma('foreign_keys = ON');
  const upTo5 = MIGRATIONS.filter((m) => m.version <= 5);
  expect(migrate(db, upTo5)).toBe(5);
  db.prepare("INSERT INTO tenants (id, name) VALUES ('t', 'T')").run();
  db.prepare(`INSERT INTO refresh_tokens (token_hash, tenant_id, family_id, client_id, user_id, scope, staff, expires_ms)
    VALUES ('h', 't', 'f', 'c', 'u', 'read', 0, 1000)`).run();

  expect(migrate(db, [...upTo5, migration0006])).toBe(6);
  expect(db.pragma('user_version', { simple: true })).toBe(6);
  // A refresh token from before the upgrade has no recorded access token (it cannot be revoked early).
  expect(db.prepare('SELECT token_hash, family_id, access_jti, access_expires_ms FROM refresh_tokens').all()).toEqual([
    { token_hash: 'h', family_id: 'f', access_jti: null, access_expires_ms: null },
  ]);

  const revoke = db.prepare(
    'INSERT INTO token_revocations (tenant_id, jti, family_id, expires_ms, revoked_ms) VALUES (?, ?, ?, ?, ?)',
  );
  revoke.run('t', 'j', 'f', 2000, 1000);
  expect(db.prepare('SELECT * FROM token_revocations').all()).toEqual([
    { tenant_id: 't', jti: 'j', family_id: 'f', expires_ms: 2000, revoked_ms: 1000 },
  ]);
  // Keyed by tenant then jti; STRICT columns; tenant-scoped foreign key.
  expect(() => revoke.run('t', 'j', 'f', 3000, 1000)).toThrow(/UNIQUE/);
  expect(() => revoke.run('t', 'k', 'f', 'later', 1000)).toThrow();
  expect(() => revoke.run('nobody', 'k', 'f', 2000, 1000)).toThrow(/FOREIGN KEY/);
  expect(db.prepare("SELECT sql FROM sqlite_master WHERE name = 'token_revocations'").get()).toMatchObject({
    sql: expect.stringMatching(/PRIMARY KEY \(tenant_id, jti\)[\s\S]*STRICT/),
  });
});
