import { expect, test } from 'vitest';
import { createBuckets } from './token-bucket.js';

test('a charge after the fact can take the level below zero; the wait then covers the debt', () => {
  let now = 0;
  const buckets = createBuckets({ burst: 5, refillSeconds: 1 }, () => now);
  buckets.take('a');
  buckets.charge('a', 7); // 5 - 1 - 7 = -3
  expect(buckets.waitMs('a')).toBe(4000);
  now = 3999;
  expect(buckets.waitMs('a')).toBeGreaterThan(0);
  now = 4000;
  expect(buckets.waitMs('a')).toBe(0);
  // Other keys are not touched; a full bucket is forgotten.
  expect(buckets.waitMs('b')).toBe(0);
  now = 100_000;
  buckets.give('a');
  expect(buckets.size).toBe(0);
});
