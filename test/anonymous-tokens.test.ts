import { afterAll, beforeAll, expect, test } from 'vitest';
import { DEMO, startTestBox, type TestBox, type TokenAnswer, tokenFrom } from './support/box.js';

// auth.anonymous.perAddressPerMinute 30: 30 new anonymous users from one address at once, then one per 2 s.
let box: TestBox;
beforeAll(async () => {
  box = await startTestBox({ config: { auth: { anonymous: { perAddressPerMinute: 30 } } } });
});
afterAll(async () => {
  await box?.stop();
});

const ANONYMOUS = { grant_type: 'password', username: 'anonymous', password: '' };

test('40 anonymous tokens from one address: 429 past the budget; another address, staff and refresh still served', async () => {
  const flooder = '127.0.0.1';
  const answers: TokenAnswer[] = [];
  for (let i = 0; i < 40; i++) answers.push(await tokenFrom(box, flooder, ANONYMOUS));
  const granted = answers.filter((a) => a.status === 200);
  // The budget of 30, and one more if the run took over 2 s.
  expect(granted.length).toBeGreaterThanOrEqual(30);
  expect(granted.length).toBeLessThanOrEqual(31);
  expect(answers.slice(0, 30).every((a) => a.status === 200)).toBe(true);
  for (const a of answers.slice(granted.length)) {
    expect(a).toMatchObject({
      status: 429,
      retryAfter: expect.stringMatching(/^[12]$/),
      body: { error: 'temporarily_unavailable', error_description: expect.any(String) },
    });
  }

  // Another client of the venue LAN is not affected.
  expect(await tokenFrom(box, '127.0.0.2', ANONYMOUS)).toMatchObject({ status: 200, body: { scope: 'read' } });
  // Neither are staff sign-in nor refresh, from the throttled address itself.
  expect(
    await tokenFrom(box, flooder, { grant_type: 'password', username: 'kelner', password: DEMO.staff.password }),
  ).toMatchObject({ status: 200, body: { scope: 'read write' } });
  expect(
    await tokenFrom(box, flooder, { grant_type: 'refresh_token', refresh_token: granted[0]!.body.refresh_token! }),
  ).toMatchObject({ status: 200, body: { scope: 'read' } });
  // And the budget refills: one new anonymous user every 2 s.
  const wait = Number((await tokenFrom(box, flooder, ANONYMOUS)).retryAfter);
  await new Promise((r) => setTimeout(r, wait * 1000 + 100));
  expect(await tokenFrom(box, flooder, ANONYMOUS)).toMatchObject({ status: 200 });
});
