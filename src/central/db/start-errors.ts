import { ProcessError } from '../../shared/errors.js';

/** PostgreSQL's SQLSTATE for "permission denied". */
export const INSUFFICIENT_PRIVILEGE = '42501';

const codeOf = (err: unknown): unknown => (err as { code?: unknown } | null)?.code;

/**
 * A database user without the rights the central needs at start (migrations, the monthly partitions), told what
 * it lacks and where the grants are documented: exit 78, a configuration error. Undefined for any other error.
 */
export function lacksRights(err: unknown, doing: string): ProcessError | undefined {
  if (codeOf(err) !== INSUFFICIENT_PRIVILEGE) return undefined;
  return new ProcessError(
    'config',
    `the database user cannot ${doing} (${(err as Error).message}): it must own the central's tables and have ` +
      'CREATE on their schema (docs/sync.md "Several central processes")',
  );
}

/** SQLSTATEs of a --database-url that cannot work as given: a wrong password or user, no such database. */
const WRONG_URL = new Set(['28P01', '28000', '3D000']);
/** Errors of a server that is not there or not taking connections yet: a supervisor's restart may find it. */
const NOT_THERE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', '57P03']);

/**
 * The database could not be reached at start: a URL that cannot work is exit 78 (fixing it takes a person),
 * a server that is away is exit 69 (docs/operations.md "Exit codes"); one line each, no stack trace. Undefined
 * for any other error.
 */
export function cannotConnect(err: unknown): ProcessError | undefined {
  const code = codeOf(err);
  const message = (err as Error | null)?.message ?? '';
  if (typeof code === 'string' && WRONG_URL.has(code))
    return new ProcessError(
      'config',
      `the central's database refused the connection: ${message}; check --database-url`,
    );
  if ((typeof code === 'string' && NOT_THERE.has(code)) || /timeout exceeded when trying to connect/.test(message))
    return new ProcessError('unavailable', `the central's database is not reachable: ${message}`);
  return undefined;
}
