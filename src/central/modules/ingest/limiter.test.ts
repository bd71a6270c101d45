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
  const limiter = createIngestLimiter(2, () => 0.999);
  const a = limiter.acquire('a');
  const sameDevice = refusal(() => limiter.acquire('a'));
  expect(sameDevice).toMatchObject({ status: 429, codes: [{ code: 'tooManyRequests' }], headers: { 'Retry-After': '5' } });
  const b = limiter.acquire('b');
  expect(refusal(() => limiter.acquire('c')).status).toBe(429);
  expect(limiter.active).toBe(2);
  const idle = limiter.idle();
  a();
  a(); // a second release changes nothing
  expect(limiter.active).toBe(1);
  const c = limiter.acquire('c');
  b();
  c();
  await idle;
  expect(limiter.active).toBe(0);
  expect(createIngestLimiter(0, () => 0).acquire.bind(null, 'x')).toThrow(AppError);
});
