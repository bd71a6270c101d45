import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { allocateItems, allocatePackets, trimLocks } from './stock-lock-allocation.js';

const M = 1_000_000;

describe('allocateItems', () => {
  test('each item gets min(packets x qty, free); lines of one item share it in order', () => {
    const free = new Map([
      ['milk', 10 * M],
      ['egg', 3 * M],
    ]);
    const grants = allocateItems(
      2,
      [
        { id: 'milk', qtyMicro: 3 * M },
        { id: 'egg', qtyMicro: 2 * M },
        { id: 'milk', qtyMicro: 3 * M },
        { id: 'ghost', qtyMicro: M },
      ],
      free,
    );
    expect(grants).toEqual([
      { id: 'milk', requestedMicro: 6 * M, lockedMicro: 6 * M },
      { id: 'egg', requestedMicro: 4 * M, lockedMicro: 3 * M },
      { id: 'milk', requestedMicro: 6 * M, lockedMicro: 4 * M },
      { id: 'ghost', requestedMicro: 2 * M, lockedMicro: 0 },
    ]);
    expect(free.get('milk')).toBe(0);
  });

  test('a product past 2^53 still locks exactly what is free', () => {
    const free = new Map([['x', 5]]);
    const [g] = allocateItems(2_147_483_647, [{ id: 'x', qtyMicro: 999_999_999_999_999 }], free);
    expect(g!.lockedMicro).toBe(5);
  });
});

describe('allocatePackets', () => {
  test('whole packets only, in body order, each the largest k that fits', () => {
    const free = new Map([
      ['bun', 5 * M],
      ['patty', 3 * M],
      ['cheese', 10 * M],
    ]);
    const grants = allocatePackets(
      [
        {
          name: 'burger',
          qty: 4,
          items: [
            { id: 'bun', qtyMicro: M },
            { id: 'patty', qtyMicro: M },
          ],
        },
        {
          name: 'double',
          qty: 2,
          items: [
            { id: 'bun', qtyMicro: M },
            { id: 'patty', qtyMicro: M },
            { id: 'patty', qtyMicro: M },
          ],
        },
        { name: 'cheese', qty: 3, items: [{ id: 'cheese', qtyMicro: 4 * M }] },
        { name: 'empty', qty: 7, items: [] },
      ],
      free,
    );
    expect(grants.map((g) => [g.name, g.requested, g.locked])).toEqual([
      ['burger', 4, 3],
      ['double', 2, 0],
      ['cheese', 3, 2],
      ['empty', 7, 7],
    ]);
    expect(grants[0]!.items).toEqual(
      new Map([
        ['bun', 3 * M],
        ['patty', 3 * M],
      ]),
    );
    expect(free).toEqual(
      new Map([
        ['bun', 2 * M],
        ['patty', 0],
        ['cheese', 2 * M],
      ]),
    );
  });

  test('property: every packet is whole and maximal, and nothing is over-allocated', () => {
    const item = fc.record({ id: fc.constantFrom('a', 'b', 'c'), qtyMicro: fc.integer({ min: 1, max: 5 * M }) });
    const packet = fc.record({
      name: fc.string(),
      qty: fc.integer({ min: 1, max: 20 }),
      items: fc.array(item, { maxLength: 4 }),
    });
    const stock = fc.record({ a: fc.nat(30 * M), b: fc.nat(30 * M), c: fc.nat(30 * M) });
    fc.assert(
      fc.property(fc.array(packet, { maxLength: 6 }), stock, (packets, s) => {
        const free = new Map(Object.entries(s));
        const grants = allocatePackets(packets, free);
        const left = new Map(Object.entries(s));
        grants.forEach((g, i) => {
          const p = packets[i]!;
          expect(Number.isInteger(g.locked) && g.locked >= 0 && g.locked <= p.qty).toBe(true);
          const need = new Map<string, number>();
          for (const it of p.items) need.set(it.id, (need.get(it.id) ?? 0) + it.qtyMicro);
          for (const [id, n] of need) {
            expect(g.items.get(id)).toBe(g.locked * n);
            left.set(id, left.get(id)! - g.locked * n);
          }
          // Maximal: one more packet would not have fitted.
          if (g.locked < p.qty) expect([...need].some(([id, n]) => left.get(id)! < n)).toBe(true);
        });
        for (const [id, v] of left) {
          expect(v).toBeGreaterThanOrEqual(0);
          expect(free.get(id)).toBe(v);
        }
      }),
    );
  });
});

describe('trimLocks', () => {
  const locks = [
    { userId: 'me', qtyMicro: 4, expiresMs: 100 },
    { userId: 'old', qtyMicro: 3, expiresMs: 50 },
    { userId: 'new', qtyMicro: 3, expiresMs: 90 },
  ];
  test('nothing changes while the locks fit the stock', () => {
    expect(trimLocks(locks, 10, 'me')).toEqual([]);
  });
  test("the caller's own lock shrinks first, then the most recently renewed", () => {
    expect(trimLocks(locks, 7, 'me')).toEqual([{ userId: 'me', qtyMicro: 1, expiresMs: 100 }]);
    expect(trimLocks(locks, 2, 'me')).toEqual([
      { userId: 'me', qtyMicro: 0, expiresMs: 100 },
      { userId: 'new', qtyMicro: 0, expiresMs: 90 },
      { userId: 'old', qtyMicro: 2, expiresMs: 50 },
    ]);
  });
});
