import { expect, test } from 'vitest';
import { createRateLimiter } from './token-bucket.js';

test('a charge after the fact can take the level below zero; the wait then covers the debt', () => {
  let now = 0;
  const limiter = createRateLimiter({ burst: 5, refillSeconds: 1 }, () => now);
  limiter.take('a');
  limiter.charge('a', 7); // 5 - 1 - 7 = -3
  expect(limiter.waitMs('a')).toBe(4000);
  now = 3999;
  expect(limiter.waitMs('a')).toBeGreaterThan(0);
  now = 4000;
  expect(limiter.waitMs('a')).toBe(0);
  // Other keys are not touched; a full bucket is forgotten.
  expect(limiter.waitMs('b')).toBe(0);
  now = 100_000;
  limiter.give('a');
  expect(limiter.size).toBe(0);
});
