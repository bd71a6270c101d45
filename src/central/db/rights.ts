import { ProcessError } from '../../shared/errors.js';

/** PostgreSQL's SQLSTATE for "permission denied". */
export const INSUFFICIENT_PRIVILEGE = '42501';

/**
 * A database user without the rights the central needs at start (migrations, the monthly partitions), told what
 * it lacks and where the grants are documented: exit 78, a configuration error. Undefined for any other error.
 */
export function lacksRights(err: unknown, doing: string): ProcessError | undefined {
  if ((err as { code?: unknown } | null)?.code !== INSUFFICIENT_PRIVILEGE) return undefined;
  return new ProcessError(
    'config',
    `the database user cannot ${doing} (${(err as Error).message}): it must own the central's tables and have ` +
      'CREATE on their schema (docs/sync.md "Running it")',
  );
}
