import type { Logger } from '../../log.js';
import { openEmbedded } from './embedded.js';
import { migrate } from './migrate.js';
import { createPool, type Pool } from './pool.js';
import { cannotConnect } from './start-errors.js';

export interface CentralDatabase {
  pool: Pool;
  /** The connection string (the catalogue's LISTEN connection opens its own). */
  url: string;
  /** False while the embedded cluster is down and being started again (/readyz says so at once); true by URL. */
  up(): boolean;
  /** Rejects (exit 69) when the embedded cluster died and did not start again; never resolves by URL. */
  failed: Promise<never>;
  /** Closes the pool, then stops the embedded cluster when this process started it; bounded, whatever its state. */
  close(): Promise<void>;
}

export interface OpenOptions {
  dataDir: string;
  databaseUrl?: string;
  /** The embedded cluster's port (`--database-port`); default a free one. */
  databasePort?: number;
  /** 'serve' owns the embedded cluster; 'client' (a CLI command) uses the running one when there is one. */
  mode: 'serve' | 'client';
  log?: Logger;
  poolSize?: number;
}

/**
 * How long closing the pool may take. pool.end() waits for every client to be given back and for each connection
 * to say goodbye: a request stuck on a server that is gone, or a socket nobody answers, would hold it for ever.
 */
const POOL_END_TIMEOUT_MS = 3000;

/** Connects (starting the embedded PostgreSQL when no URL is given) and migrates. */
export async function openCentralDatabase(o: OpenOptions): Promise<CentralDatabase> {
  const embedded = o.databaseUrl ? undefined : await openEmbedded(o.dataDir, o.mode, o.log, { port: o.databasePort });
  const url = o.databaseUrl ?? embedded!.url;
  const pool = createPool(url, o.poolSize);
  const close = async () => {
    const late = new Promise<'late'>((r) => setTimeout(() => r('late'), POOL_END_TIMEOUT_MS).unref());
    const ended = await Promise.race([pool.end().catch(() => undefined), late]);
    if (ended === 'late') o.log?.warn({ timeoutMs: POOL_END_TIMEOUT_MS }, 'the pool did not close in time: going on');
    await embedded?.stop();
  };
  try {
    const { from, to } = await migrate(pool);
    if (from !== to) o.log?.info({ from, to }, 'central database migrated');
    return { pool, url, up: embedded?.up ?? (() => true), failed: embedded?.failed ?? new Promise(() => {}), close };
  } catch (err) {
    await close();
    throw cannotConnect(err) ?? err;
  }
}
