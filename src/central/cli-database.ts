import { resolve } from 'node:path';
import { openCentralDatabase } from './db/open.js';
import type { Pool } from './db/pool.js';

/**
 * Runs `fn` on the central's database for a CLI command (docs/sync.md "Running it"): the running central's
 * cluster, or one started for the command, or `--database-url`'s.
 */
export async function withPool<T>(
  values: { 'data-dir'?: string; 'database-url'?: string },
  fn: (pool: Pool) => Promise<T>,
): Promise<T> {
  const db = await openCentralDatabase({
    dataDir: resolve(values['data-dir'] ?? './central-data'),
    databaseUrl: values['database-url'],
    mode: 'client',
    poolSize: 2,
  });
  try {
    return await fn(db.pool);
  } finally {
    await db.close();
  }
}
