import { expect, test } from 'vitest';
import { markOnTheEventLoopOnOneCore } from './gc-on-one-core.js';

test('concurrent marking is turned off on one core only; with more the default stays', () => {
  expect(markOnTheEventLoopOnOneCore(2)).toBe(false);
  expect(markOnTheEventLoopOnOneCore(4)).toBe(false);
  expect(markOnTheEventLoopOnOneCore(1)).toBe(true);
});
