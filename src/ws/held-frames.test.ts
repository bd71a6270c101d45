import { expect, test } from 'vitest';
import { createHeldFrames } from './held-frames.js';

test('a stream with held frames is told about the seqs before its first held one; released, the end again', () => {
  const held = createHeldFrames();
  expect(held.limit('t:u', 7)).toBe(7);
  held.hold('t:u', 8);
  held.hold('t:u', 9);
  held.hold('t:venue:v', 3);
  // The database already says 9; a socket opening now starts after 7 and gets 8 and 9 when they are pushed.
  expect(held.limit('t:u', 9)).toBe(7);
  expect(held.limit('t:other', 4)).toBe(4);
  held.release('t:u', 8);
  expect(held.limit('t:u', 9)).toBe(8);
  held.release('t:u', 9);
  held.release('t:venue:v', 3);
  expect(held.limit('t:u', 9)).toBe(9);
  expect(held.size()).toBe(0);
});

test('releasing a frame that was never held changes nothing', () => {
  const held = createHeldFrames();
  held.hold('k', 5);
  held.release('k', 4);
  held.release('other', 1);
  expect(held.limit('k', 10)).toBe(4);
});
