import { expect, test } from 'vitest';
import { parsePaperStatus } from './printer-status.js';

test('DLE EOT 4 status bytes: ok, near end, out; anything else is not a status byte', () => {
  expect(parsePaperStatus(0x12)).toBe('ok');
  expect(parsePaperStatus(0x1e)).toBe('nearEnd');
  expect(parsePaperStatus(0x72)).toBe('out');
  expect(parsePaperStatus(0x7e)).toBe('out');
  expect(parsePaperStatus(0x00)).toBeUndefined();
  expect(parsePaperStatus(0x41)).toBeUndefined();
});
