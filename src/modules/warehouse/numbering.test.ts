import { describe, expect, test } from 'vitest';
import { contentDigest, formatNumber, periodOf } from './numbering.js';
import type { DocumentInput } from './schemas.js';

describe('document numbers', () => {
  test('kind, UTC year and month, six-digit sequence', () => {
    const ms = Date.UTC(2026, 10, 30, 23, 59);
    expect(formatNumber('PZ', periodOf(ms), 1)).toBe('PZ/2026/11/000001');
    expect(formatNumber('Inventory', periodOf(Date.UTC(2027, 0, 1)), 42)).toBe('INV/2027/01/000042');
    expect(formatNumber('WZ', '2026/11', 1_234_567)).toBe('WZ/2026/11/1234567');
  });
});

describe('content digest', () => {
  const doc = (over: Partial<DocumentInput> = {}): DocumentInput => ({
    kind: 'PZ',
    number: 'A',
    items: [{ id: 'x', unit: 'kg', qty: 1, extra: { a: '1', b: '2' } }],
    qtyMicro: [1_000_000],
    unlockItems: false,
    extra: {},
    ...over,
  });
  test('key order does not matter, content does', () => {
    const reordered = doc({ items: [{ extra: { b: '2', a: '1' }, qty: 1, unit: 'kg', id: 'x' }] });
    expect(contentDigest(reordered)).toBe(contentDigest(doc()));
    expect(contentDigest(doc({ items: [{ id: 'x', unit: 'kg', qty: 2 }] }))).not.toBe(contentDigest(doc()));
    expect(contentDigest(doc({ unlockItems: true }))).not.toBe(contentDigest(doc()));
    expect(contentDigest(doc({ extra: { note: 'n' } }))).not.toBe(contentDigest(doc()));
    expect(contentDigest(doc({ extra: { b: '1', a: '2' } }))).toBe(contentDigest(doc({ extra: { a: '2', b: '1' } })));
    expect(
      contentDigest(doc({ items: [{ id: 'x', unit: 'kg', qty: 1, extra: { a: '1', b: '2' }, cat: [] }] })),
    ).not.toBe(contentDigest(doc()));
    expect(contentDigest(doc({ targetWarehouse: 'w' }))).not.toBe(contentDigest(doc()));
  });
});
