import { describe, expect, test } from 'vitest';
import { MAX_RANGE_BYTES, parseContentRange, parseRange } from './ranges.js';

describe('Content-Range of an upload piece', () => {
  test('bytes A-B/TOTAL, both ends inclusive', () => {
    expect(parseContentRange('bytes 0-1023/4096')).toEqual({ start: 0, end: 1023, total: 4096 });
    expect(parseContentRange('bytes 4095-4095/4096')).toEqual({ start: 4095, end: 4095, total: 4096 });
  });

  test.each([
    undefined,
    '',
    'bytes */4096',
    'bytes 0-1023/*',
    'items 0-1/2',
    'bytes -1-3/4',
    'bytes 0-1023/4096, bytes 0-1/4096',
    'bytes 1e3-2000/4096',
  ])('%s is malformed', (header) => {
    expect(parseContentRange(header)).toMatch(/^Content-Range must be/);
  });

  test('an end before the start, or at TOTAL, is refused', () => {
    expect(parseContentRange('bytes 10-9/20')).toMatch(/end before it starts/);
    expect(parseContentRange('bytes 0-20/20')).toMatch(/end before TOTAL/);
  });
});

describe('Range of a download', () => {
  test('a range inside the blob, its end held to the last byte', () => {
    expect(parseRange('bytes=0-99', 1000)).toEqual({ start: 0, end: 99 });
    expect(parseRange('bytes=900-5000', 1000)).toEqual({ start: 900, end: 999 });
    expect(parseRange(`bytes=0-${MAX_RANGE_BYTES - 1}`, MAX_RANGE_BYTES * 2)).toEqual({
      start: 0,
      end: MAX_RANGE_BYTES - 1,
    });
  });

  test('no Range, an open or suffix range, several, or more than 8 MiB: refused with the rule', () => {
    for (const header of [undefined, 'bytes=0-', 'bytes=-100', 'bytes=0-1,5-6', 'pages=0-1']) {
      expect(parseRange(header, 1000)).toEqual({ refused: expect.stringMatching(/Range/) });
    }
    // Counted as asked, also past the end of a smaller blob.
    for (const size of [MAX_RANGE_BYTES * 2, 1000]) {
      expect(parseRange(`bytes=0-${MAX_RANGE_BYTES}`, size)).toEqual({
        refused: expect.stringMatching(/asks for 8388609 bytes: .* at most 8388608 bytes/),
      });
    }
  });

  test('a start past the end, or an end before the start, is refused', () => {
    expect(parseRange('bytes=1000-1001', 1000)).toEqual({ refused: expect.stringMatching(/past the last byte/) });
    expect(parseRange('bytes=5-4', 1000)).toEqual({ refused: expect.stringMatching(/ends before/) });
  });
});
