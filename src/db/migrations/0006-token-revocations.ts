import type { Migration } from '../migrate.js';

/**
 * Revoking a refresh-token family also revokes the access tokens issued to it (docs/api.md "Token revocation").
 * Each refresh token is issued together with exactly one access token, so its row records that token's jti
 * and expiry: revoking a family copies them into token_revocations, which the box keeps in memory and checks
 * on every request and socket upgrade. Rows written before this migration have no jti (their access tokens
 * live at most auth.accessTokenTtlSeconds and cannot be revoked early).
 */
export const migration0006: Migration = {
  version: 6,
  name: 'token-revocations',
  up: `
ALTER TABLE refresh_tokens ADD COLUMN access_jti TEXT;
ALTER TABLE refresh_tokens ADD COLUMN access_expires_ms INTEGER;

-- Revoked access tokens, kept until they would have expired anyway (then pruned by the hourly sweep).
CREATE TABLE token_revocations (
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  jti TEXT NOT NULL,
  family_id TEXT NOT NULL,
  expires_ms INTEGER NOT NULL,
  revoked_ms INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, jti)
) STRICT;
CREATE INDEX token_revocations_expiry ON token_revocations (expires_ms);
`,
};
