/**
 * What the report facts take from a batch's order events beyond the orders row (docs/sync.md "HQ reports and
 * order search"): the contact of the order's newest event, and when it first reached ORDERED (or later) and
 * READY, from the command's confirmedAt. Firsts are kept as the earliest instant seen, so events arriving in any
 * order, or twice, give the same facts.
 */
import type { Queryable } from '../../db/pool.js';
import { createFactsRepo } from './facts-repo.js';
import { kitchenMaxMayDrop, rollupDeltas } from './rollups.js';

/** Statuses that count as a sale (NEW is a basket, CANCELLED is none); migration 7's `sale` column says the same. */
export const SALE_STATUSES: readonly string[] = ['ORDERED', 'READY', 'COMPLETED'];

export interface OrderEventFacts {
  id: string;
  seq: number;
  status: string;
  confirmedAt: string;
  contact: Record<string, string> | null;
}

export interface FactInput {
  orderId: string;
  /** The contact as JSON text, null when the order has none. */
  contact: string | null;
  orderedAt: Date | null;
  readyAt: Date | null;
}

const MIN_MS = Date.UTC(2000, 0, 1);
const MAX_MS = Date.UTC(10000, 0, 1) - 1;

/** A confirmedAt the box wrote; anything that is no date of years 2000-9999 reads as none. */
export function instantOf(text: string): Date | null {
  const ms = Date.parse(text);
  return Number.isFinite(ms) && ms >= MIN_MS && ms <= MAX_MS ? new Date(ms) : null;
}

const earliest = (a: Date | null, b: Date | null): Date | null => (a === null ? b : b === null || a <= b ? a : b);

/** One input per order of the batch: its newest event's contact, the earliest ORDERED and READY instants. */
export function factInputs(events: readonly OrderEventFacts[]): FactInput[] {
  const byOrder = new Map<string, FactInput & { seq: number }>();
  for (const e of events) {
    const at = instantOf(e.confirmedAt);
    const orderedAt = SALE_STATUSES.includes(e.status) ? at : null;
    const readyAt = e.status === 'READY' ? at : null;
    const contact = e.contact === null ? null : JSON.stringify(e.contact);
    const seen = byOrder.get(e.id);
    if (!seen) {
      byOrder.set(e.id, { orderId: e.id, seq: e.seq, contact, orderedAt, readyAt });
      continue;
    }
    seen.orderedAt = earliest(seen.orderedAt, orderedAt);
    seen.readyAt = earliest(seen.readyAt, readyAt);
    if (e.seq > seen.seq) Object.assign(seen, { seq: e.seq, contact });
  }
  return [...byOrder.values()].map(({ seq: _seq, ...input }) => input);
}

/**
 * Replaces the report facts of the batch's orders (their orders rows are written already): the old facts out,
 * the new ones in, the rollups moved by the difference, kitchen maxima that may have dropped recomputed. The
 * earliest instants carry over from the old facts, so an order's first ORDERED and READY survive the versions
 * that follow them.
 */
export async function refreshFacts(db: Queryable, tenantId: string, events: readonly OrderEventFacts[]): Promise<void> {
  if (events.length === 0) return;
  const repo = createFactsRepo(db);
  const inputs = factInputs(events);
  const before = await repo.removeFacts(
    tenantId,
    inputs.map((i) => i.orderId),
  );
  const first = new Map<string, { orderedAt: Date | null; readyAt: Date | null }>();
  for (const f of before.facts) {
    const seen = first.get(f.order_id);
    first.set(f.order_id, {
      orderedAt: earliest(seen?.orderedAt ?? null, f.ordered_at),
      readyAt: earliest(seen?.readyAt ?? null, f.ready_at),
    });
  }
  for (const input of inputs) {
    const seen = first.get(input.orderId);
    if (!seen) continue;
    input.orderedAt = earliest(seen.orderedAt, input.orderedAt);
    input.readyAt = earliest(seen.readyAt, input.readyAt);
  }
  const after = await repo.addFacts(tenantId, inputs, before.zones);
  const deltas = rollupDeltas(before, after);
  await repo.applyDeltas(tenantId, deltas);
  if (kitchenMaxMayDrop(deltas)) await repo.recomputeKitchenMax(tenantId);
}
