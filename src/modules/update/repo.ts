import type { Db } from '../../db/open.js';
import type { Quiet } from './window.js';

/** SQL of the updates: whether the venue is quiet, and the database's schema version. */
export function createUpdateRepo(db: Db) {
  // Open: sent to the kitchen and not yet collected, or a tab not yet closed (a basket nobody sent does not count).
  const open = db.prepare(
    `SELECT count(*) AS n FROM orders
      WHERE closed = 0 AND (status <> 'NEW' OR order_type = 'DINE_IN_OPEN')`,
  );
  const lastCommand = db.prepare('SELECT max(confirmed_ms) AS ms FROM order_commands');
  return {
    quiet(): Quiet {
      return {
        openOrders: (open.get() as { n: number }).n,
        lastCommandMs: (lastCommand.get() as { ms: number | null }).ms,
      };
    },
    schema: (): number => db.pragma('user_version', { simple: true }) as number,
    /** The health gate's self-check: SQLite's quick_check, and the printers' queue readable. */
    selfCheck(): string | undefined {
      const check = db.pragma('quick_check', { simple: true });
      if (check !== 'ok') return `the database fails quick_check: ${String(check)}`;
      db.prepare('SELECT count(*) FROM print_jobs').get();
      return undefined;
    },
  };
}
export type UpdateRepo = ReturnType<typeof createUpdateRepo>;
