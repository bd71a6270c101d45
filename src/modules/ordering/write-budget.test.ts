import { expect, test } from 'vitest';
import { AppError } from '../../shared/errors.js';
import { BYTES_OF_AN_ORDER, BYTES_PER_NEW_LINE, createWriteBudget } from './write-budget.js';

const KIB = 1024;
const T = 'tenant';
const budgetAt = (clock: { ms: number }) =>
  createWriteBudget(
    {
      perAddress: { burstBytes: 100 * KIB, bytesPerMinute: 60 * KIB },
      venue: { burstBytes: 250 * KIB, bytesPerMinute: 120 * KIB },
    },
    () => clock.ms,
  );

/** The refusal's option and Retry-After seconds, or undefined when admitted. */
function refusal(fn: () => unknown): [string, number] | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return [String(err.codes[0]?.args?.[0]), Number(err.headers['Retry-After'])];
  }
}

let n = 0;
/** One command from `address` on `order`, admitted, queued and applied having stored `bytes`. */
const write = (budget: ReturnType<typeof budgetAt>, address: string, bytes: number, order = `o${n}`): void => {
  const id = `c${n++}`;
  budget.hold(id, budget.admit(T, address, order, 0));
  budget.charge(id, T, order, bytes);
};

test('an address pays for the bytes its commands stored; its debt is paid back at the refill rate', () => {
  const clock = { ms: 0 };
  const budget = budgetAt(clock);
  write(budget, '10.0.0.2', 150 * KIB); // more than the burst: admitted (it had room), the rest a debt
  expect(refusal(() => budget.admit(T, '10.0.0.2', 'x', 0))).toEqual(['ordering.addressWriteRate', 51]);
  // Another address has its own budget, and the same /64 of IPv6 is one address.
  expect(refusal(() => budget.admit(T, '10.0.0.3', 'x', 0))).toBeUndefined();
  write(budget, '2001:db8:1:2::1', 150 * KIB);
  expect(refusal(() => budget.admit(T, '2001:db8:1:2::99', 'x', 0))?.[0]).toBe('ordering.addressWriteRate');
  clock.ms += 51_000; // 1 KiB a second: the debt of 50 KiB and one more
  expect(refusal(() => budget.admit(T, '10.0.0.2', 'x', 0))).toBeUndefined();
});

test("the venue's customers together have a budget of their own, whatever their addresses", () => {
  const clock = { ms: 0 };
  const budget = budgetAt(clock);
  write(budget, '10.0.1.1', 90 * KIB);
  write(budget, '10.0.1.2', 90 * KIB);
  write(budget, '10.0.1.3', 90 * KIB);
  expect(refusal(() => budget.admit(T, '10.0.1.4', 'x', 0))).toEqual(['ordering.venueWriteRate', 11]);
  // Another tenant's venue is not this one.
  expect(refusal(() => budget.admit('other', '10.0.1.4', 'x', 0))).toBeUndefined();
});

test('commands sent together are charged an estimate at once: what their order last stored, and their new lines', () => {
  const clock = { ms: 0 };
  const budget = budgetAt(clock);
  write(budget, '10.0.2.1', 30 * KIB, 'big'); // the order now stores 30 KiB a command
  // Three more on it, sent together before any is applied: 70 KiB were left, 3 x 30 KiB estimated.
  const held = [0, 1, 2].map((i) => {
    const admitted = budget.admit(T, '10.0.2.1', 'big', 0);
    budget.hold(`t${i}`, admitted);
    return admitted;
  });
  expect(held.map((h) => h.estimate)).toEqual([30, 30, 30]);
  expect(refusal(() => budget.admit(T, '10.0.2.1', 'big', 0))?.[0]).toBe('ordering.addressWriteRate');
  // A new order is estimated as an empty order and its lines.
  expect(budget.admit(T, '10.0.2.9', 'fresh', 10).estimate).toBe((BYTES_OF_AN_ORDER + 10 * BYTES_PER_NEW_LINE) / KIB);
  // Applied smaller than estimated, the difference comes back; a failed confirmation gives its estimate back.
  budget.charge('t0', T, 'big', 10 * KIB);
  budget.release('t1');
  budget.refused('t2', 1 * KIB);
  // 100 - 30 (first) - 10 - 1 = 59 KiB left, and a little refill: a 30 KiB command is admitted again.
  expect(refusal(() => budget.admit(T, '10.0.2.1', 'big', 0))).toBeUndefined();
});
