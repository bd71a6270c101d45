import { expect, test } from 'vitest';
import { type PrinterError, parsePaperStatus, StatusReader } from './printer-status.js';

test('DLE EOT 4 status bytes: ok, near end, out; anything else is not a status byte', () => {
  expect(parsePaperStatus(0x12)).toBe('ok');
  expect(parsePaperStatus(0x1e)).toBe('nearEnd');
  expect(parsePaperStatus(0x72)).toBe('out');
  expect(parsePaperStatus(0x7e)).toBe('out');
  expect(parsePaperStatus(0x00)).toBeUndefined();
  expect(parsePaperStatus(0x41)).toBeUndefined();
});

test('a status wait given up on (timed out) never silences the newer one', async () => {
  const reader = new StatusReader();
  const old = reader.next('old', 10).catch((err: PrinterError) => err.reason);
  const current = reader.next('current', 1000);
  expect(await old).toBe('offline');
  reader.push(Buffer.from([0x41, 0x72])); // a byte that is no status, then paper out
  expect(await current).toBe('out');
});
