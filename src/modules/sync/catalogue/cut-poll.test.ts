import { expect, test } from 'vitest';
import { CentralError } from '../client.js';
import { createPollWait, looksCut, RETRY_CONFIGURED_MS } from './cut-poll.js';

const gateway = (status: number) => new CentralError(status, `central answered ${status}: <html>Gateway Time-out`);
const reset = new CentralError(0, 'central unreachable (ECONNRESET)');

test('a gateway error or a reset after a while looks like a cut; the central, our timeout or a quick failure do not', () => {
  expect(looksCut(gateway(504), 60_000, 60)).toBe(true);
  expect(looksCut(gateway(502), 30_200, 60)).toBe(true);
  expect(looksCut(reset, 12_000, 25)).toBe(true);
  expect(looksCut(gateway(504), 800, 60)).toBe(false);
  expect(looksCut(new CentralError(502, 'bad', { message: 'x', codes: [] } as never), 30_000, 60)).toBe(false);
  expect(looksCut(new CentralError(503, 'shutting down'), 30_000, 60)).toBe(false);
  expect(looksCut(new CentralError(0, 'central unreachable (timeout)'), 30_000, 60)).toBe(false);
  expect(looksCut(new CentralError(0, 'central unreachable (EAI_AGAIN)'), 30_000, 60)).toBe(false);
  expect(looksCut(new CentralError(0, 'central stopped answering (answer too large)'), 30_000, 60)).toBe(false);
  expect(looksCut(reset, 75_000, 60)).toBe(false);
  expect(looksCut(new Error('other'), 30_000, 60)).toBe(false);
});

test('the second cut at the same moment shortens the wait; a lone one, or cuts at random moments, do not', () => {
  let clock = 0;
  const wait = createPollWait(60, () => clock);
  expect(wait.failed(gateway(504), 60_000)).toBeUndefined(); // an ordinary failure the first time
  expect(wait.failed(gateway(504), 60_400)).toBe(55);
  expect(wait.seconds()).toBe(55);
  // A crash now and then, at any moment, changes nothing.
  expect(wait.failed(reset, 20_000)).toBeUndefined();
  wait.answered();
  expect(wait.failed(reset, 31_000)).toBeUndefined();
  expect(wait.failed(reset, 9_000)).toBeUndefined();
  expect(wait.seconds()).toBe(55);
  // Never below the minimum.
  const short = createPollWait(25, () => clock);
  short.failed(reset, 6_000);
  expect(short.failed(reset, 6_500)).toBe(5);
  short.failed(reset, 5_200);
  expect(short.failed(reset, 5_300)).toBeUndefined();
  expect(short.seconds()).toBe(5);
  // An hour later the configured wait is tried again.
  clock += RETRY_CONFIGURED_MS;
  expect(short.seconds()).toBe(25);
});
