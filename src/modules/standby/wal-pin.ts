import Database from 'better-sqlite3';
import { betterSqliteOptions } from '../../native/addons.js';
import type { Db } from '../../db/open.js';

/**
 * Keeps the primary's WAL from restarting over frames the standby has not acknowledged (docs/architecture.md
 * "A standby box"), as Litestream does: a read transaction held open on a connection of its own. While a reader
 * holds a snapshot, a checkpoint copies frames back only up to that snapshot, and SQLite restarts the WAL only
 * once every frame is copied back and no reader uses it; a reader that began with the WAL copied back whole
 * (read mark 0) keeps every checkpoint from copying anything. So while a pin is held the WAL only grows.
 *
 * `renew()` moves the pin to the WAL as it is now: the new read transaction begins before the old one ends, on the
 * other of two connections, so there is never a moment without one. `release()` lets the WAL restart (the
 * replicator does so only when every frame is acknowledged, and restarts it itself at once).
 */
export function createWalPin(file: string) {
  const open = (): Db => {
    const db = new Database(file, betterSqliteOptions());
    db.pragma('busy_timeout = 5000');
    return db;
  };
  const conns = [open(), open()];
  const begin = conns.map((c) => c.prepare('BEGIN'));
  const read = conns.map((c) => c.prepare('SELECT count(*) FROM sqlite_master'));
  const end = conns.map((c) => c.prepare('COMMIT'));
  /** Index of the connection holding the pin, or -1. */
  let holding = -1;
  const hold = (i: number): void => {
    begin[i]!.run();
    read[i]!.get();
  };
  const let_go = (i: number): void => {
    if (conns[i]!.inTransaction) end[i]!.run();
  };
  return {
    renew(): void {
      const next = holding === 0 ? 1 : 0;
      hold(next);
      if (holding >= 0) let_go(holding);
      holding = next;
    },
    release(): void {
      if (holding >= 0) let_go(holding);
      holding = -1;
    },
    close(): void {
      this.release();
      for (const c of conns) c.close();
    },
  };
}
export type WalPin = ReturnType<typeof createWalPin>;
