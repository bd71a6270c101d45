/**
 * Hardening against hostile devices (test/central-hardening.test.ts):
 * - devices keep the proof of their head: the header line (text as received) and the Ed25519 signature of the
 *   batch that set it, returned by the tail fetch (TailResponse.proof). Heads set before this migration have none
 *   (null) until the device's next batch moves its head.
 * - balances stay inside +-Number.MAX_SAFE_INTEGER micro-units, so every one reads back as an exact JS number; a
 *   document that would pass it fails its savepoint and becomes a dead letter. NOT VALID: rows written before are
 *   not checked (a read reports such a balance as null), every new or changed row is.
 */
export const sql = `
ALTER TABLE devices ADD COLUMN head_header text, ADD COLUMN head_signature bytea;

ALTER TABLE stock_balances ADD CONSTRAINT stock_balances_qty_safe
  CHECK (qty_micro BETWEEN -9007199254740991 AND 9007199254740991) NOT VALID;
`;
