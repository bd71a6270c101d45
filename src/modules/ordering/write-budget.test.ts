import { expect, test } from 'vitest';
import { AppError } from '../../shared/errors.js';
import { createWriteBudget, MAX_IN_FLIGHT_PER_ADDRESS } from './write-budget.js';

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
    return [String(err.codes[0]?.args?.[0]), Number(err.headers?.['Retry-After'])];
  }
}

let n = 0;
/** One command from `address`, admitted, queued and applied having stored `bytes`. */
const write = (budget: ReturnType<typeof budgetAt>, address: string, bytes: number): void => {
  const key = budget.admit(T, address);
  const id = `c${n++}`;
  budget.hold(id, T, key);
  budget.charge(id, bytes);
};

test('an address pays for the bytes its commands stored; its debt is paid back at the refill rate', () => {
  const clock = { ms: 0 };
  const budget = budgetAt(clock);
  write(budget, '10.0.0.2', 150 * KIB); // more than the burst: admitted (one unit was there), the rest a debt
  expect(refusal(() => budget.admit(T, '10.0.0.2'))).toEqual(['ordering.addressWriteRate', 51]);
  // Another address has its own budget, and the same /64 of IPv6 is one address.
  expect(refusal(() => budget.admit(T, '10.0.0.3'))).toBeUndefined();
  write(budget, '2001:db8:1:2::1', 150 * KIB);
  expect(refusal(() => budget.admit(T, '2001:db8:1:2::99'))?.[0]).toBe('ordering.addressWriteRate');
  clock.ms += 51_000; // 1 KiB a second: the debt of 50 KiB and one unit more
  expect(refusal(() => budget.admit(T, '10.0.0.2'))).toBeUndefined();
});

test("the venue's customers together have a budget of their own, whatever their addresses", () => {
  const clock = { ms: 0 };
  const budget = budgetAt(clock);
  write(budget, '10.0.1.1', 90 * KIB);
  write(budget, '10.0.1.2', 90 * KIB);
  write(budget, '10.0.1.3', 90 * KIB);
  expect(refusal(() => budget.admit(T, '10.0.1.4'))).toEqual(['ordering.venueWriteRate', 11]);
  // Another tenant's venue is not this one.
  expect(refusal(() => budget.admit('other', '10.0.1.4'))).toBeUndefined();
});

test('commands admitted and not yet applied are bounded per address, and let go once applied or failed', () => {
  const clock = { ms: 0 };
  const budget = budgetAt(clock);
  const ids = Array.from({ length: MAX_IN_FLIGHT_PER_ADDRESS }, (_, i) => {
    const key = budget.admit(T, '10.0.2.1');
    budget.hold(`f${i}`, T, key);
    return `f${i}`;
  });
  expect(refusal(() => budget.admit(T, '10.0.2.1'))).toEqual(['ordering.addressWriteRate', 1]);
  budget.release(ids[0]!); // its confirmation failed
  expect(refusal(() => budget.admit(T, '10.0.2.1'))).toBeUndefined();
  budget.hold('f-next', T, `${T}\n10.0.2.1`);
  expect(refusal(() => budget.admit(T, '10.0.2.1'))?.[0]).toBe('ordering.addressWriteRate');
  budget.charge(ids[1]!, 100); // applied, small
  expect(refusal(() => budget.admit(T, '10.0.2.1'))).toBeUndefined();
  // Held ones never charged (a lost answer) are let go after 30 s.
  budget.hold('f-more', T, `${T}\n10.0.2.1`);
  clock.ms += 30_001;
  expect(refusal(() => budget.admit(T, '10.0.2.1'))).toBeUndefined();
});
