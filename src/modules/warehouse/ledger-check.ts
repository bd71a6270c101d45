import type { Db } from '../../db/open.js';
import { fromMicro } from '../../shared/qty.js';
import { type BalanceRow, createWarehouseRepo, type WarehouseRepo } from './repo.js';

/** One item whose cached balance differs from its ledger. */
export interface Difference {
  tenant: string;
  warehouse: string;
  item: string;
  /** The cached balance, or null when the cache has no row. */
  cached: { unit: string; qty: number } | null;
  /** The ledger's sum, or null when the ledger has no rows for the item. */
  ledger: { unit: string; qty: number } | null;
  problem: string;
  /** False where the ledger itself is inconsistent (mixed units, negative sum): no cache can equal it. */
  repairable: boolean;
}

export interface LedgerCheck {
  /** Items compared (union of the ledger's and the cache's). */
  items: number;
  differences: Difference[];
}

const key = (r: { tenantId: string; warehouseId: string; itemId: string }): string =>
  `${r.tenantId}\0${r.warehouseId}\0${r.itemId}`;

function compare(ledger: (BalanceRow & { units: number })[], cache: BalanceRow[]): LedgerCheck {
  const cached = new Map(cache.map((b) => [key(b), b]));
  const differences: Difference[] = [];
  const describe = (b: BalanceRow | undefined) => (b ? { unit: b.unit, qty: fromMicro(b.qtyMicro) } : null);
  const differ = (l: BalanceRow | undefined, c: BalanceRow | undefined, problem: string, repairable = true) => {
    const r = (l ?? c)!;
    differences.push({
      tenant: r.tenantId,
      warehouse: r.warehouseId,
      item: r.itemId,
      cached: describe(c),
      ledger: describe(l),
      problem,
      repairable,
    });
  };
  for (const l of ledger) {
    const c = cached.get(key(l));
    cached.delete(key(l));
    if (l.units > 1) differ(l, c, 'the ledger names the item in more than one unit', false);
    else if (l.qtyMicro < 0) differ(l, c, 'the ledger sums to a negative quantity', false);
    else if (!c) differ(l, c, 'no cached balance');
    else if (c.qtyMicro !== l.qtyMicro) differ(l, c, 'cached quantity differs from the ledger');
    else if (c.unit !== l.unit) differ(l, c, 'cached unit differs from the ledger');
  }
  for (const c of cached.values()) differ(undefined, c, 'cached balance without ledger rows');
  return { items: ledger.length + cached.size, differences };
}

/** Recomputes every balance from the ledger (one read snapshot) and reports each difference from the cache. */
export function checkLedger(repo: WarehouseRepo): LedgerCheck {
  return repo.read(() => compare(repo.ledgerSums(), repo.balances()));
}

/** Rewrites the cached balances that differ from the ledger, in one transaction; returns what it found. */
export function rebuildBalances(repo: WarehouseRepo): LedgerCheck {
  return repo.transaction(() => {
    const sums = repo.ledgerSums();
    const result = compare(sums, repo.balances());
    const byKey = new Map(sums.map((s) => [key(s), s]));
    for (const d of result.differences) {
      if (!d.repairable) continue;
      const sum = byKey.get(key({ tenantId: d.tenant, warehouseId: d.warehouse, itemId: d.item }));
      if (sum) repo.putBalance(sum);
      else repo.deleteBalance(d.tenant, d.warehouse, d.item);
    }
    return result;
  });
}

export type StockAction = 'check' | 'rebuild';

const qty = (b: Difference['cached']): string => (b ? `${b.qty} ${b.unit}` : 'none');

const line = (d: Difference): string =>
  `tenant ${d.tenant} warehouse ${d.warehouse} item ${d.item}: cached ${qty(d.cached)}, ledger ${qty(d.ledger)}` +
  ` (${d.problem})\n`;

/**
 * `venue-box stock check`: recomputes every balance from the ledger and reports each difference from the
 * cached balances (exit 1 if any). `venue-box stock rebuild`: rewrites the differing cached balances (exit 1
 * only if the ledger itself is inconsistent, which no cache can repair).
 */
export function runStockCommand(db: Db, action: StockAction): { output: string; exitCode: number } {
  const repo = createWarehouseRepo(db);
  if (action === 'check') {
    const { items, differences } = checkLedger(repo);
    const body = differences.map((d) => `difference: ${line(d)}`).join('');
    return {
      output: `${body}stock check: ${items} items, ${differences.length} differences\n`,
      exitCode: differences.length > 0 ? 1 : 0,
    };
  }
  const { items, differences } = rebuildBalances(repo);
  const broken = differences.filter((d) => !d.repairable);
  const body = differences.map((d) => `${d.repairable ? 'repaired' : 'cannot repair'}: ${line(d)}`).join('');
  return {
    output: `${body}stock rebuild: ${items} items, ${differences.length - broken.length} repaired, ${broken.length} not repairable\n`,
    exitCode: broken.length > 0 ? 1 : 0,
  };
}
