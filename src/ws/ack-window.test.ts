import { expect, test } from 'vitest';
import { countPong, countSent, newAckWindow, pingPayload } from './ack-window.js';

const limits = { maxBytes: 1000, pingEveryBytes: 250 };

test('a ping every quarter window, carrying the byte count it acknowledges', () => {
  const w = newAckWindow();
  expect(countSent(w, 200, limits)).toBeUndefined();
  expect(countSent(w, 100, limits)).toBe('ping');
  expect(pingPayload(w)).toBe('300');
  // One ping in flight at a time.
  expect(countSent(w, 300, limits)).toBeUndefined();
  expect(countPong(w, '300')).toBe(true);
  expect(w).toEqual({ sent: 600, acked: 300, pingAt: -1 });
  // After the pong the next ping is due at once: 300 bytes are still unacknowledged.
  expect(countSent(w, 0, limits)).toBe('ping');
  expect(pingPayload(w)).toBe('600');
});

test('a reader that stops answering is too slow once it is more than the window behind, before the next frame', () => {
  const w = newAckWindow();
  expect(countSent(w, 300, limits)).toBe('ping');
  expect(countSent(w, 700, limits)).toBeUndefined(); // exactly the window behind: not yet
  expect(countSent(w, 1, limits)).toBeUndefined();
  expect(countSent(w, 1, limits)).toBe('tooSlow');
});

test('one frame larger than the window does not close a reader that is keeping up', () => {
  const w = newAckWindow();
  expect(countSent(w, 5000, limits)).toBe('ping');
  expect(countPong(w, '5000')).toBe(true);
  expect(countSent(w, 5000, limits)).toBe('ping');
});

test('pongs that answer no ping of ours acknowledge nothing', () => {
  const w = newAckWindow();
  countSent(w, 300, limits);
  expect(countPong(w, '')).toBe(false); // an answer to uWS's own idle ping
  expect(countPong(w, '299')).toBe(false);
  expect(countPong(w, '9999')).toBe(false);
  expect(w.acked).toBe(0);
  expect(countPong(w, '300')).toBe(true);
  expect(countPong(w, '300')).toBe(false);
});
