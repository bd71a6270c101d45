/**
 * The central's refresh tokens keep the access token issued with each (as the box's do since its migration 0006),
 * so that a retry of a refresh within the grace gets the same pair again (src/shared/oauth/server.ts, docs/api.md
 * "Token revocation"). Rows from before have none: a retry of their refresh is reuse, as it was.
 */
export const sql = `
ALTER TABLE refresh_tokens ADD COLUMN access_jti text, ADD COLUMN access_expires_at timestamptz;
`;
