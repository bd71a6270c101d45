import { describe, expect, test } from 'vitest';
import { formatMoney, parseMoney } from './money.js';

describe('money', () => {
  test('parses decimal strings to minor units exactly', () => {
    expect(parseMoney('12.50')).toBe(1250);
    expect(parseMoney('0.1')).toBe(10);
    expect(parseMoney('7')).toBe(700);
    expect(parseMoney('-3.05')).toBe(-305);
    expect(parseMoney(19.99)).toBe(1999);
  });

  test('formats minor units with two decimals', () => {
    expect(formatMoney(1250)).toBe('12.50');
    expect(formatMoney(5)).toBe('0.05');
    expect(formatMoney(0)).toBe('0.00');
    expect(formatMoney(-305)).toBe('-3.05');
  });

  test('rejects more than two decimals and garbage', () => {
    expect(() => parseMoney('1.005')).toThrow(RangeError);
    expect(() => parseMoney('abc')).toThrow(RangeError);
    expect(() => parseMoney('')).toThrow(RangeError);
  });
});
