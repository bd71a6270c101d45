/**
 * The nonces of signed requests (docs/sync.md "Signed requests"), so that a captured request is refused when it is
 * sent again: one row per nonce a device used, kept until `expires_at` (twice the window, past which its timestamp
 * alone refuses it), in the database so that every central process behind a balancer sees every other's. The
 * challenges a central hands a hello it refused as stale are rows here too, their nonce prefixed with `!`, which no
 * box's nonce carries. Expired rows go at the device's next hello (in the statement that records its nonce), so a
 * device holds about a window's requests; a revoked one keeps its last few, and a deleted one none.
 */
export const sql = `
CREATE TABLE request_nonces (
  tenant_id text NOT NULL,
  device_id text NOT NULL,
  nonce text NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, device_id, nonce),
  FOREIGN KEY (tenant_id, device_id) REFERENCES devices ON DELETE CASCADE
);
`;
