/**
 * The key that signs headquarters' access tokens, in the database so that every central process on it signs and
 * verifies with the same one (docs/sync.md "Running it": any process answers any request). One row per key, the
 * newest signs; `secret_key` is tweetnacl's 64-byte secret. Not a tenant's data, so not keyed by tenant: on Citus
 * it is a reference table.
 */
export const sql = `
CREATE TABLE signing_keys (
  kid text PRIMARY KEY,
  secret_key bytea NOT NULL CHECK (octet_length(secret_key) = 64),
  created_at timestamptz NOT NULL DEFAULT now()
);
`;
