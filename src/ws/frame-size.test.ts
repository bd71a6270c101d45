import { expect, test } from 'vitest';
import { fitsBytes, wireFrame } from './frame-size.js';

const frame = (seq: number, payload: unknown) =>
  `{"type":"ORDER_CHANGE","seq":${seq},"payload":${JSON.stringify(payload)}}`;

test('a frame within the limit goes out as it is', () => {
  const text = frame(3, { id: 'o1', note: 'x'.repeat(100) });
  expect(wireFrame(text, 3, 1024)).toBe(text);
});

test('a larger frame becomes an ORDER_TOO_LARGE notice with the same seq and the order id', () => {
  const text = frame(7, { id: 'o1', note: 'x'.repeat(2000) });
  expect(JSON.parse(wireFrame(text, 7, 1024))).toEqual({ type: 'ORDER_TOO_LARGE', seq: 7, payload: { orderId: 'o1' } });
});

test('a NOTIFICATION names its orderId', () => {
  const text = `{"type":"NOTIFICATION","seq":2,"payload":${JSON.stringify({ orderId: 'o2', message: 'y'.repeat(2000) })}}`;
  expect(JSON.parse(wireFrame(text, 2, 1024)).payload).toEqual({ orderId: 'o2' });
});

test('bytes, not UTF-16 units, are measured', () => {
  expect(fitsBytes('ż'.repeat(400), 1024)).toBe(true);
  expect(fitsBytes('ż'.repeat(600), 1024)).toBe(false);
  expect(fitsBytes('a'.repeat(1025), 1024)).toBe(false);
});
