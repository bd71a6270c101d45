import { expect, test } from 'vitest';
import type { Principal } from '../http/types.js';
import { AppError } from '../shared/errors.js';
import { createSocketCounts } from './socket-counts.js';

const principal = (userId: string, jti: string): Principal => ({
  tenantId: 't',
  userId,
  jti,
  scope: [],
  staff: false,
  expMs: 0,
});

const refusal = (fn: () => void) => {
  try {
    fn();
  } catch (err) {
    return err instanceof AppError ? { status: err.status, args: err.codes[0]!.args } : err;
  }
  return undefined;
};

test('per token, then per user; a closed socket frees its place', () => {
  const counts = createSocketCounts({ maxPerUser: 3, maxPerToken: 2 });
  const a = principal('u', 'j1');
  counts.add(counts.keysOf(a));
  counts.add(counts.keysOf(a));
  expect(refusal(() => counts.check(a))).toEqual({ status: 429, args: ['sockets.maxPerToken'] });
  const b = principal('u', 'j2');
  counts.check(b);
  counts.add(counts.keysOf(b));
  expect(refusal(() => counts.check(principal('u', 'j3')))).toEqual({ status: 429, args: ['sockets.maxPerUser'] });
  counts.check(principal('other', 'j4'));
  counts.remove(counts.keysOf(a));
  expect(refusal(() => counts.check(principal('u', 'j3')))).toBeUndefined();
});
