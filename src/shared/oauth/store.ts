/*
 * What the one OAuth server (./server.ts) needs of a database: the box's SQLite (src/modules/auth/) and the
 * central's PostgreSQL (src/central/modules/auth/) each supply it; the grants, client authentication, RFC 6749
 * errors, refresh rotation with its retry grace and the sign-in throttle are the server's alone.
 */

/** A refresh token as stored: only its sha256, with the access token issued together with it. */
export interface RefreshRow {
  tokenHash: string;
  tenantId: string;
  familyId: string;
  clientId: string;
  userId: string;
  scope: string;
  /** A staff (or headquarters) user; false for the box's anonymous customers. */
  staff: boolean;
  expiresMs: number;
  usedMs: number | null;
  revoked: boolean;
  /** The access token issued with this refresh token (null on rows written before a store kept it). */
  accessJti: string | null;
  accessExpiresMs: number | null;
}

export type NewRefresh = Omit<RefreshRow, 'usedMs' | 'revoked'>;

/** What a refresh grant does, decided by the server from the presented token's row and its successor's. */
export type Rotation =
  /** Spend `spent` (used at the rotation's time) and store `next`, its successor. */
  | { kind: 'rotate'; spent: RefreshRow; next: NewRefresh }
  /** A retry within the grace: nothing is written, the answer is the first one's again. */
  | { kind: 'retry' }
  /** A spent token presented again: revoke its whole family (OAuth 2.0 Security BCP 4.14). */
  | { kind: 'reuse'; spent: RefreshRow };

export interface SignInUser {
  id: string;
  passwordHash: string;
  scope: string;
}

export interface OAuthStore {
  /** The stored hash of the client's secret; undefined for an unknown tenant or client. */
  clientSecretHash(tenantId: string, clientId: string): Promise<string | undefined>;
  /** The user who signs in with a password (staff on the box, headquarters at the central). */
  user(tenantId: string, username: string): Promise<SignInUser | undefined>;
  /**
   * The tenant of the refresh token with this hash, undefined when none has it: a refresh sent without x-tenant
   * names its tenant by its token (docs/api.md "OAuth discovery").
   */
  refreshTenant(tokenHash: string): Promise<string | undefined>;
  /** Stores the first refresh token of a new family; resolves once it is durable. */
  insertRefresh(row: NewRefresh): Promise<void>;
  /**
   * In one transaction: reads the rows of the presented token and of its successor (by hash, the presented one
   * locked where the store locks rows), hands them to `decide` and writes what it returns. Resolves once that is
   * durable; when `decide` throws, nothing is written and the promise rejects with it.
   */
  rotate(
    tenantId: string,
    presented: string,
    successor: string,
    nowMs: number,
    decide: (row: RefreshRow | undefined, next: RefreshRow | undefined) => Rotation,
  ): Promise<Rotation>;
}
