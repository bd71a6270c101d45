/**
 * Dead letters that headquarters can replay (docs/sync.md "Dead letters"): `venue-box central dead-letters retry`
 * projects a dead-lettered event again once its cause is fixed. `retries` counts the attempts, `retried_at` is the
 * last, and `resolved_at` is set when one succeeded: the row stays, as the record of what happened, and counts as
 * a dead letter no more. `reason` keeps the last failure. Rows from before this migration are waiting ones.
 */
export const sql = `
ALTER TABLE sync_dead_letters
  ADD COLUMN retries integer NOT NULL DEFAULT 0 CHECK (retries >= 0),
  ADD COLUMN retried_at timestamptz,
  ADD COLUMN resolved_at timestamptz,
  ADD CONSTRAINT sync_dead_letters_resolved_retried CHECK (resolved_at IS NULL OR retried_at IS NOT NULL);
`;
