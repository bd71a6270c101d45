import type { Pool } from '../../db/pool.js';
import { createCatalogueRepo, type CatalogueRepo } from './repo.js';

export interface ChangeResult {
  /** The tenant's catalogue rev after the change (unchanged when nothing differed). */
  rev: number;
  changed: boolean;
}

/**
 * One change of a tenant's catalogue, in one transaction: the next rev first (locking the tenant's counter,
 * so every check `fn` makes holds until COMMIT and changes commit in rev order), then `fn` writes its rows at
 * that rev and says whether anything differed, then its author and NOTIFY (delivered at COMMIT). A change that
 * differs in nothing rolls back and takes no rev; one that throws writes nothing.
 */
export async function changeCatalogue(
  pool: Pool,
  tenantId: string,
  fn: (repo: CatalogueRepo, rev: number) => Promise<boolean>,
  /** The headquarters user making the change through the API; an import has none. */
  author?: string,
): Promise<ChangeResult> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const repo = createCatalogueRepo(client);
    const rev = await repo.nextRev(tenantId);
    if (!(await fn(repo, rev))) {
      await client.query('ROLLBACK');
      return { rev: (await createCatalogueRepo(pool).position(tenantId)).rev, changed: false };
    }
    if (author !== undefined) await repo.recordAuthor(tenantId, rev, author);
    await repo.notify(tenantId);
    await client.query('COMMIT');
    return { rev, changed: true };
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/** Runs every write (all of them, not stopping at the first that changed) and says whether any changed. */
export async function anyChanged(writes: (() => Promise<boolean>)[]): Promise<boolean> {
  let changed = false;
  for (const write of writes) changed = (await write()) || changed;
  return changed;
}
