import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { fromMicro, isExactQty, MAX_QTY, MAX_QTY_MICRO, QtyError, toMicro } from './qty.js';

describe('qty', () => {
  test('converts quantities of up to 6 decimals to micro-units exactly', () => {
    expect(toMicro(1)).toBe(1_000_000);
    expect(toMicro(0.1)).toBe(100_000);
    expect(toMicro(0.000001)).toBe(1);
    expect(toMicro(1.234567)).toBe(1_234_567);
    expect(toMicro(2.675)).toBe(2_675_000);
    expect(toMicro(123456789.123456)).toBe(123_456_789_123_456);
    expect(toMicro(MAX_QTY)).toBe(MAX_QTY_MICRO);
    expect(toMicro(-0)).toBe(0);
    expect(Object.is(toMicro(-0), 0)).toBe(true);
    expect(toMicro(-3.5)).toBe(-3_500_000);
  });

  test('refuses more than 6 decimals, non-finite numbers and out-of-range values', () => {
    expect(() => toMicro(0.0000001)).toThrow(QtyError);
    expect(() => toMicro(1.2345678)).toThrow(QtyError);
    expect(() => toMicro(0.1 + 0.2)).toThrow(QtyError); // 0.30000000000000004
    expect(() => toMicro(Number.NaN)).toThrow(QtyError);
    expect(() => toMicro(Number.POSITIVE_INFINITY)).toThrow(QtyError);
    expect(() => toMicro(1e9)).toThrow(QtyError);
    expect(() => toMicro('1' as unknown as number)).toThrow(QtyError);
    expect(isExactQty(1.5)).toBe(true);
    expect(isExactQty(1e-7)).toBe(false);
  });

  test('formats micro-units back to the same number', () => {
    expect(fromMicro(1_500_000)).toBe(1.5);
    expect(fromMicro(1)).toBe(0.000001);
    expect(fromMicro(MAX_QTY_MICRO)).toBe(999999999.999999);
    expect(() => fromMicro(0.5)).toThrow(QtyError);
  });

  test('every micro-unit count in range round-trips through its decimal text', () => {
    fc.assert(
      fc.property(fc.integer({ min: -MAX_QTY_MICRO, max: MAX_QTY_MICRO }), (micro) => {
        const text = JSON.stringify(fromMicro(micro));
        const decimals = text.split('.')[1]?.length ?? 0;
        expect(decimals).toBeLessThanOrEqual(6);
        expect(toMicro(JSON.parse(text) as number)).toBe(micro);
      }),
      { numRuns: 2000 },
    );
  });
});
