import type { Logger } from '../../log.js';
import { openEmbedded } from './embedded.js';
import { migrate } from './migrate.js';
import { createPool, type Pool } from './pool.js';
import { cannotConnect } from './start-errors.js';

export interface CentralDatabase {
  pool: Pool;
  /** The connection string (the catalogue's LISTEN connection opens its own). */
  url: string;
  /** Closes the pool, then stops the embedded cluster when this process started it. */
  close(): Promise<void>;
}

export interface OpenOptions {
  dataDir: string;
  databaseUrl?: string;
  /** 'serve' owns the embedded cluster; 'client' (a CLI command) uses the running one when there is one. */
  mode: 'serve' | 'client';
  log?: Logger;
  poolSize?: number;
}

/** Connects (starting the embedded PostgreSQL when no URL is given) and migrates. */
export async function openCentralDatabase(o: OpenOptions): Promise<CentralDatabase> {
  const embedded = o.databaseUrl ? undefined : await openEmbedded(o.dataDir, o.mode, o.log);
  const url = o.databaseUrl ?? embedded!.url;
  const pool = createPool(url, o.poolSize);
  const close = async () => {
    await pool.end().catch(() => undefined);
    await embedded?.stop();
  };
  try {
    const { from, to } = await migrate(pool);
    if (from !== to) o.log?.info({ from, to }, 'central database migrated');
    return { pool, url, close };
  } catch (err) {
    await close();
    throw cannotConnect(err) ?? err;
  }
}
