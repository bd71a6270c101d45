import { expect, test } from 'vitest';
import type { Principal } from '../http/types.js';
import { AppError } from '../shared/errors.js';
import { createSocketTickets } from './socket-tickets.js';

const user = (userId: string, expMs = 3_600_000): Principal => ({
  tenantId: 't',
  userId,
  scope: ['read'],
  staff: false,
  expMs,
  jti: `jti-${userId}`,
});
const limits = { ttlMs: 30_000, maxPerUser: 2, maxPerAddress: 3, maxTotal: 4 };

test('a ticket opens once, for its token, within its life', () => {
  let t = 1000;
  const tickets = createSocketTickets(() => t, limits);
  const a = tickets.issue('token-a', user('a'), '192.0.2.1');
  expect(a.expiresIn).toBe(30);
  expect(a.ticket).toMatch(/^[\w-]{43}$/);
  expect(tickets.redeem(a.ticket)).toBe('token-a');
  expect(tickets.redeem(a.ticket)).toBeUndefined();
  expect(tickets.redeem('not-a-ticket')).toBeUndefined();

  const b = tickets.issue('token-b', user('b'), '192.0.2.1');
  t += 30_000;
  expect(tickets.redeem(b.ticket)).toBeUndefined();
  expect(tickets.size()).toBe(0);
});

test('a ticket never outlives its token', () => {
  let t = 0;
  const tickets = createSocketTickets(() => t, limits);
  const a = tickets.issue('token-a', user('a', 10_500), '192.0.2.1');
  expect(a.expiresIn).toBe(10);
  t = 10_500;
  expect(tickets.redeem(a.ticket)).toBeUndefined();
});

test('unused tickets are bounded per user, per address and in all; used and expired ones free their place', () => {
  let t = 0;
  const tickets = createSocketTickets(() => t, limits);
  const first = tickets.issue('x', user('a'), '192.0.2.1');
  t = 5000;
  tickets.issue('x', user('a'), '192.0.2.1');
  const refused = (() => {
    try {
      tickets.issue('x', user('a'), '192.0.2.2');
    } catch (err) {
      return err as AppError;
    }
  })();
  expect(refused).toBeInstanceOf(AppError);
  expect(refused!.status).toBe(429);
  expect(refused!.codes[0]!.code).toBe('tooManyRequests');
  // The oldest of the user's unused tickets expires 25 s later.
  expect(refused!.headers['Retry-After']).toBe('25');
  tickets.redeem(first.ticket);
  tickets.issue('x', user('a'), '192.0.2.2');

  // Expired ones are swept when the next is asked for.
  t = 35_000;
  // Per address: one IPv6 /64 is one address, as the sign-in throttle keys it.
  tickets.issue('x', user('b'), '2001:db8::1');
  tickets.issue('x', user('c'), '2001:db8::2');
  tickets.issue('x', user('d'), '2001:db8::3');
  expect(() => tickets.issue('x', user('e'), '2001:db8:0:0:1::4')).toThrow(/from this address/);
  tickets.issue('x', user('e'), '192.0.2.9');
  expect(() => tickets.issue('x', user('f'), '192.0.2.10')).toThrow(/on this box/);
  expect(tickets.size()).toBe(4);
});
