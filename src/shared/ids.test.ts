import { expect, test } from 'vitest';
import { isUuid, newId7 } from './ids.js';

test('UUIDv7: the time in the first 48 bits, version 7, the RFC variant, and no two alike across pool refills', () => {
  const at = Date.parse('2026-11-23T18:00:00.123Z');
  const ids = Array.from({ length: 2000 }, () => newId7(at));
  for (const id of ids.slice(0, 5)) {
    expect(isUuid(id)).toBe(true);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(Number.parseInt(id.replace(/-/g, '').slice(0, 12), 16)).toBe(at);
  }
  expect(new Set(ids).size).toBe(ids.length);
  expect(newId7(at + 1) > ids[0]!).toBe(true);
});
