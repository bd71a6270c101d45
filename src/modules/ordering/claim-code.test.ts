import { expect, test } from 'vitest';
import { pickClaimCode, randomClaimCode } from './claim-code.js';

test('claim codes are six digits, leading zeros kept', () => {
  for (let i = 0; i < 1000; i++) expect(randomClaimCode()).toMatch(/^\d{6}$/);
});

test('a taken code is drawn again', () => {
  const draws = ['000042', '000042', '123456'];
  expect(
    pickClaimCode(
      (c) => c === '000042',
      () => draws.shift()!,
    ),
  ).toBe('123456');
});

test('gives up loudly instead of looping forever', () => {
  expect(() =>
    pickClaimCode(
      () => true,
      () => '000001',
      5,
    ),
  ).toThrow(/no free claim code/);
});
