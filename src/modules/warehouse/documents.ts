import {
  AppError,
  type ErrorCode,
  type ErrorDetail,
  invalidField,
  isNonEmpty,
  notFound,
  problem,
} from '../../shared/errors.js';
import { isoOf } from '../../shared/clock.js';
import { fromMicro, MAX_QTY_MICRO } from '../../shared/qty.js';
import { releaseLocks } from './stock-lock-service.js';
import { trimLocks } from './stock-lock-allocation.js';
import { contentDigest, formatNumber, periodOf } from './numbering.js';
import type { Outbox } from '../sync/up/outbox.js';
import type { LedgerRow, WarehouseRepo } from './repo.js';
import type { Actor, DocumentInput, DocumentItem, DocumentKind } from './schemas.js';

/** A document as stored and returned: what the client sent plus the server's fields. */
export interface StoredDocument {
  id: string;
  kind: DocumentKind;
  warehouse: string;
  number: string;
  targetWarehouse?: string;
  user: string;
  created: string;
  items: DocumentItem[];
  unlockItems: boolean;
  extra: Record<string, string>;
}

export interface PostResult {
  /** False when the number was posted before with the same content: the stored document is returned. */
  created: boolean;
  document: StoredDocument;
}

export interface DocumentDeps {
  repo: WarehouseRepo;
  /** A posted document goes to the central with its ledger rows, in the document's transaction. */
  outbox: Outbox;
  now(): number;
  newId(): string;
}

/** One item's change in one warehouse. */
interface Change {
  warehouseId: string;
  itemId: string;
  unit: string;
  beforeMicro: number;
  afterMicro: number;
  /** Live locks of all users on the item before the document. */
  lockedMicro: number;
}

const SIGN: Record<DocumentKind, number> = { PZ: 1, WZ: -1, RW: -1, MM: -1, Inventory: 0 };

/**
 * Posts a stock document in one write transaction: all its items apply or none do. Order of checks:
 * warehouse (404), target (400), number reuse (replay or 409 conflict), then, after unlockItems released
 * the caller's locks, units (409 unitMismatch) and stock (409 insufficientStock), each naming every item.
 */
export function postDocument(deps: DocumentDeps, actor: Actor, warehouseId: string, doc: DocumentInput): PostResult {
  const { repo } = deps;
  const t = actor.tenantId;
  return repo.transaction(() => {
    if (!repo.warehouse(t, warehouseId)) throw notFound('warehouse');
    const target = doc.targetWarehouse;
    if (target !== undefined) {
      if (target === warehouseId) throw invalidField('/targetWarehouse', 'targetWarehouse must be another warehouse');
      if (!repo.warehouse(t, target))
        throw invalidField('/targetWarehouse', 'targetWarehouse is not a warehouse of this tenant');
    }
    const digest = contentDigest(doc);
    if (doc.number !== undefined) {
      const stored = repo.document(t, warehouseId, doc.kind, doc.number);
      if (stored) {
        if (stored.contentSha256 !== digest) {
          throw AppError.of('conflict', `${doc.kind} ${doc.number} already exists with other content`, [doc.number]);
        }
        return { created: false, document: JSON.parse(stored.documentJson) as StoredDocument };
      }
    }
    const now = deps.now();
    if (doc.unlockItems) releaseLocks(repo, actor, warehouseId, [...new Set(doc.items.map((i) => i.id))], now);
    const { changes, ledger } = plan(repo, actor, warehouseId, doc, now);

    const number = doc.number ?? assignNumber(repo, t, warehouseId, doc.kind, now);
    const document: StoredDocument = {
      id: doc.id ?? deps.newId(),
      kind: doc.kind,
      warehouse: warehouseId,
      number,
      ...(target !== undefined ? { targetWarehouse: target } : {}),
      user: actor.userId,
      created: isoOf(now),
      items: doc.items,
      unlockItems: doc.unlockItems,
      extra: doc.extra,
    };
    repo.insertDocument({
      tenantId: t,
      id: document.id,
      warehouseId,
      kind: doc.kind,
      number,
      targetWarehouseId: target ?? null,
      userId: actor.userId,
      contentSha256: digest,
      documentJson: JSON.stringify(document),
      createdMs: now,
    });
    repo.insertLedger(t, document.id, now, ledger);
    deps.outbox.append(
      t,
      'stock.document',
      document.id,
      {
        document,
        ledger: ledger.map((l) => [l.warehouseId, l.line, l.itemId, l.unit, l.deltaMicro]),
      },
      now,
    );
    for (const c of changes) {
      repo.setBalance(t, c.warehouseId, c.itemId, c.unit, c.afterMicro);
      if (c.afterMicro < c.lockedMicro) {
        const locks = repo.liveLocks(t, c.warehouseId, c.itemId, now);
        for (const l of trimLocks(locks, c.afterMicro, actor.userId)) {
          repo.setLock(t, c.warehouseId, c.itemId, l.userId, l.qtyMicro, l.expiresMs);
        }
      }
    }
    return { created: true, document };
  });
}

/** Reads the items' state, checks units and stock, and works out the balance changes and ledger rows. */
function plan(repo: WarehouseRepo, actor: Actor, warehouseId: string, doc: DocumentInput, now: number) {
  // Per item: the unit of its first line, every unit its lines name, and the sum of its lines.
  const totals = new Map<string, { unit: string; units: Set<string>; micro: number }>();
  doc.items.forEach((it, i) => {
    const t = totals.get(it.id);
    if (!t) totals.set(it.id, { unit: it.unit, units: new Set([it.unit]), micro: doc.qtyMicro[i]! });
    else {
      t.micro += doc.qtyMicro[i]!;
      t.units.add(it.unit);
    }
  });

  const mismatches: ErrorDetail<ErrorCode>[] = [];
  const shorts: ErrorDetail<ErrorCode>[] = [];
  const overflows: ErrorDetail<ErrorCode>[] = [];
  const changes: Change[] = [];
  const afterOf = new Map<string, Change>(); // Inventory: the change of each item, for its ledger row
  const apply = (
    w: string,
    id: string,
    item: { unit: string; units: Set<string> },
    delta: (before: number) => number,
  ) => {
    const s = repo.itemState(actor.tenantId, w, id, actor.userId, now);
    const unit = s.unit ?? item.unit;
    for (const given of item.units) {
      if (given === unit) continue;
      const where = w === warehouseId ? 'this warehouse' : `warehouse ${w}`;
      mismatches.push(
        problem('unitMismatch', `item ${id} is kept in ${unit} in ${where}, not ${given}`, [id, unit, given]),
      );
    }
    const c: Change = {
      warehouseId: w,
      itemId: id,
      unit,
      beforeMicro: s.qtyMicro,
      afterMicro: s.qtyMicro + delta(s.qtyMicro),
      lockedMicro: s.lockedMicro,
    };
    changes.push(c);
    if (c.afterMicro < c.beforeMicro && doc.kind !== 'Inventory') {
      // What the caller may issue: the stock minus other users' live locks (its own locks are its to use).
      const available = Math.max(0, s.qtyMicro - (s.lockedMicro - s.ownMicro));
      const wanted = c.beforeMicro - c.afterMicro;
      if (wanted > available) {
        shorts.push(
          problem(
            'insufficientStock',
            `item ${id}: ${fromMicro(wanted)} ${unit} requested, ${fromMicro(available)} available`,
            [id, String(fromMicro(available)), String(fromMicro(wanted))],
          ),
        );
      }
    }
    if (c.afterMicro > MAX_QTY_MICRO) {
      overflows.push(
        problem('conflict', `item ${id} would pass the largest quantity ${fromMicro(MAX_QTY_MICRO)}`, [id]),
      );
    }
    return c;
  };

  const sign = SIGN[doc.kind];
  for (const [id, item] of totals) {
    if (doc.kind === 'Inventory')
      afterOf.set(
        id,
        apply(warehouseId, id, item, (before) => item.micro - before),
      );
    // An MM from headquarters out of a warehouse this box does not keep: only the receipt is booked here.
    else if (!doc.sourceElsewhere) apply(warehouseId, id, item, () => sign * item.micro);
    if (doc.targetWarehouse !== undefined) apply(doc.targetWarehouse, id, item, () => item.micro);
  }
  if (isNonEmpty(mismatches))
    throw AppError.ofAll(`${mismatches.length} item unit(s) differ from the kept unit`, mismatches);
  if (isNonEmpty(shorts)) throw AppError.ofAll(`not enough stock for ${shorts.length} item(s)`, shorts);
  if (isNonEmpty(overflows))
    throw AppError.ofAll(`${overflows.length} item(s) would pass the largest quantity`, overflows);

  const ledger: LedgerRow[] = [];
  doc.items.forEach((it, line) => {
    const micro = doc.qtyMicro[line]!;
    const inventory = afterOf.get(it.id);
    const delta = inventory ? inventory.afterMicro - inventory.beforeMicro : sign * micro;
    if (!doc.sourceElsewhere) ledger.push({ warehouseId, line, itemId: it.id, unit: it.unit, deltaMicro: delta });
    if (doc.targetWarehouse !== undefined) {
      ledger.push({ warehouseId: doc.targetWarehouse, line, itemId: it.id, unit: it.unit, deltaMicro: micro });
    }
  });
  return { changes, ledger };
}

/** The next free server number of the warehouse, kind and month (a client may have used one already). */
function assignNumber(
  repo: WarehouseRepo,
  tenantId: string,
  warehouseId: string,
  kind: DocumentKind,
  now: number,
): string {
  const period = periodOf(now);
  for (;;) {
    const number = formatNumber(kind, period, repo.nextNumber(tenantId, warehouseId, kind, period));
    if (!repo.document(tenantId, warehouseId, kind, number)) return number;
  }
}
