import { expect, test } from 'vitest';
import { AppError } from '../../../shared/errors.js';
import { createIngestLimiter } from './limiter.js';

const refusal = (fn: () => unknown): AppError => {
  try {
    fn();
  } catch (err) {
    return err as AppError;
  }
  throw new Error('not refused');
};

test('admits at most max batches and one per device; refusals are 429 with Retry-After 1..5', async () => {
  const limiter = createIngestLimiter(3, () => 0.999);
  const a = limiter.admit();
  a.claimDevice('a');
  const second = limiter.admit();
  const sameDevice = refusal(() => second.claimDevice('a'));
  expect(sameDevice).toMatchObject({
    status: 429,
    codes: [{ code: 'tooManyRequests' }],
    headers: { 'Retry-After': '5' },
  });
  second.release();
  const b = limiter.admit();
  b.claimDevice('b');
  const unclaimed = limiter.admit(); // not yet authenticated: holds a central slot, no device's
  expect(refusal(() => limiter.admit()).status).toBe(429);
  expect(limiter.active).toBe(3);
  const idle = limiter.idle();
  a.release();
  a.release(); // a second release changes nothing
  expect(limiter.active).toBe(2);
  const c = limiter.admit();
  c.claimDevice('a'); // a's slot is free again
  b.release();
  c.release();
  unclaimed.release();
  await idle;
  expect(limiter.active).toBe(0);
  expect(() => createIngestLimiter(0, () => 0).admit()).toThrow(AppError);
});
