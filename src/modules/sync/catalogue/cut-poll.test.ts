import { expect, test } from 'vitest';
import { CentralError } from '../client.js';
import { waitAfterCut } from './cut-poll.js';

const gateway = (status: number) => new CentralError(status, `central answered ${status}: <html>Gateway Time-out`);
const dropped = new CentralError(0, 'central unreachable (ECONNRESET)');

test('a poll cut by a proxy after a while asks for a shorter wait from then on', () => {
  expect(waitAfterCut(gateway(504), 60_000, 60)).toBe(55);
  expect(waitAfterCut(gateway(502), 30_200, 60)).toBe(25);
  expect(waitAfterCut(dropped, 12_000, 25)).toBe(7);
  // Never below the minimum, and only ever shorter.
  expect(waitAfterCut(dropped, 6_000, 25)).toBe(5);
  expect(waitAfterCut(dropped, 6_000, 5)).toBeUndefined();
});

test("a quick failure, the central's own answer, or our own timeout is not a cut", () => {
  expect(waitAfterCut(gateway(504), 800, 60)).toBeUndefined();
  expect(waitAfterCut(new CentralError(503, 'shutting down', { message: 'x', codes: [] } as never), 30_000, 60)).toBe(
    undefined,
  );
  expect(waitAfterCut(new CentralError(502, 'bad', { message: 'x', codes: [] } as never), 30_000, 60)).toBeUndefined();
  expect(waitAfterCut(new CentralError(0, 'central unreachable (timeout)'), 30_000, 60)).toBeUndefined();
  expect(waitAfterCut(new CentralError(0, 'central unreachable (stopping)'), 30_000, 60)).toBeUndefined();
  expect(waitAfterCut(dropped, 75_000, 60)).toBeUndefined();
  expect(waitAfterCut(new Error('other'), 30_000, 60)).toBeUndefined();
});
