import { expect, test } from 'vitest';
import type { FactRow, ProductRow } from './facts-repo.js';
import { kitchenMaxMayDrop, rollupDeltas } from './rollups.js';

const fact = (over: Partial<FactRow>): FactRow => ({
  order_id: 'o',
  venue_id: 'v',
  day: '2026-03-28',
  local_hour: 12,
  order_type: 'TAKE_AWAY',
  sale: true,
  total_minor: 1000,
  kitchen_seconds: 300,
  ordered_at: null,
  ready_at: null,
  ...over,
});
const product = (over: Partial<ProductRow> = {}): ProductRow => ({
  order_id: 'o',
  venue_id: 'v',
  product_id: 'p',
  quantity: 2,
  revenue_minor: 1000,
  ...over,
});

test('a version that moves nothing touches no rollup row', () => {
  const side = { facts: [fact({})], products: [product()] };
  const d = rollupDeltas(side, structuredClone(side));
  expect(d).toEqual({ salesDaily: [], salesHourly: [], kitchen: [], productDaily: [], productTenant: [] });
  expect(kitchenMaxMayDrop(d)).toBe(false);
});

test('a sale cancelled takes out its share; a kitchen time taken out may drop the maximum', () => {
  const d = rollupDeltas(
    { facts: [fact({})], products: [product()] },
    { facts: [fact({ sale: false, total_minor: 0, kitchen_seconds: 120 })], products: [] },
  );
  expect(d.salesDaily).toEqual([{ venue: 'v', day: '2026-03-28', type: 'TAKE_AWAY', orders: -1, revenue: -1000 }]);
  expect(d.productTenant).toEqual([{ day: '2026-03-28', product: 'p', quantity: -2, revenue: -1000 }]);
  expect(d.kitchen).toEqual([
    { venue: 'v', day: '2026-03-28', orders: 0, seconds: -180, removedMax: 300, addedMax: 120 },
  ]);
  expect(kitchenMaxMayDrop(d)).toBe(true);
});

test('keys come sorted: every batch locks rollup rows in one order', () => {
  const facts = ['b', 'a', 'c'].map((v, i) => fact({ order_id: `o${i}`, venue_id: v }));
  const d = rollupDeltas({ facts: [], products: [] }, { facts, products: [] });
  expect(d.salesHourly.map((r) => r.venue)).toEqual(['a', 'b', 'c']);
});
