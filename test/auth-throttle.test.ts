import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { basic, DEMO, requestToken, startTestBox, type TestBox, type TokenAnswer, tokenFrom } from './support/box.js';

// The default limits (native-config/venue-box.jsonc "auth.throttle"): 5 failures per account and address
// (then one per 10 s), 100 per account, 20 per address, 2 password checks at once with 16 waiting. Only the
// address bucket refills slower than its default (one per 60 s, not 1 s), so that the last test does not
// depend on how fast this machine runs it.
const startBox = () => startTestBox({ config: { auth: { throttle: { address: { burst: 20, refillSeconds: 60 } } } } });
let box: TestBox;
beforeAll(async () => {
  box = await startBox();
});
afterAll(async () => {
  await box?.stop();
});

const NEAREST = '/venue-api/api/nearest?lat=50.06&lng=19.94';
const KUCHNIA = { username: 'kuchnia', password: 'kuchnia-demo-1' };
const password = (username: string, pass: string) => ({ grant_type: 'password', username, password: pass });

const fromFetch = async (res: Response): Promise<TokenAnswer> => ({
  status: res.status,
  retryAfter: res.headers.get('retry-after') ?? undefined,
  setCookie: res.headers.getSetCookie()[0],
  body: (await res.json()) as TokenAnswer['body'],
});

/** 429 in RFC 6749's error shape, with a whole number of seconds in Retry-After. */
function expectThrottled(answer: TokenAnswer): void {
  expect(answer).toMatchObject({
    status: 429,
    retryAfter: expect.stringMatching(/^[1-9]\d*$/),
    body: { error: 'temporarily_unavailable', error_description: expect.any(String) },
  });
}

describe('throttled sign-in', () => {
  test('a herd of kiosks after a restart (client secret not yet verified) all get tokens: one check serves them', async () => {
    // A box of its own, just started: the shared one has verified the secret in whichever tests ran before.
    const restarted = await startBox();
    try {
      const answers = await Promise.all(
        Array.from({ length: 40 }, () => requestToken(restarted, password('anonymous', ''))),
      );
      expect(answers.map((a) => a.status)).toEqual(Array(40).fill(200));
    } finally {
      await restarted.stop();
    }
  });

  test('60 wrong passwords for kelner at once: a handful checked, the rest 429; the box serves, kuchnia signs in', async () => {
    const reader = await box.token();
    const flood = Promise.all(
      Array.from({ length: 60 }, (_, i) => requestToken(box, password('kelner', `guess-${i}`)).then(fromFetch)),
    );
    // Meanwhile: another staff user signs in, and the API answers.
    const [answers, kuchnia, nearest] = await Promise.all([
      flood,
      requestToken(box, password(KUCHNIA.username, KUCHNIA.password)).then(fromFetch),
      box.get(NEAREST, reader.access_token),
    ]);
    expect(kuchnia).toMatchObject({ status: 200, body: { access_token: expect.any(String) } });
    expect(nearest.status).toBe(200);

    const checked = answers.filter((a) => a.status === 400);
    const throttled = answers.filter((a) => a.status === 429);
    expect(checked.length + throttled.length).toBe(60);
    // 5 failures per account and address; a refill every 10 s adds one at most on a slow run.
    expect(checked.length).toBeGreaterThanOrEqual(1);
    expect(checked.length).toBeLessThanOrEqual(6);
    for (const a of checked) expect(a.body.error).toBe('invalid_grant');
    for (const a of throttled) expectThrottled(a);

    // Still throttled one by one, still serving, kuchnia still welcome.
    for (let i = 0; i < 5; i++) expectThrottled(await fromFetch(await requestToken(box, password('kelner', 'again'))));
    expect((await box.get(NEAREST, reader.access_token)).status).toBe(200);
    await expect(box.token(KUCHNIA.username, KUCHNIA.password)).resolves.toMatchObject({ scope: 'read write' });
  });

  test('kelner under attack from one address signs in from another; a right password counts for nothing', async () => {
    const attacker = '127.0.0.3';
    const attempts: TokenAnswer[] = [];
    for (let i = 0; i < 10; i++) attempts.push(await tokenFrom(box, attacker, password('kelner', `guess-${i}`)));
    expect(attempts.slice(0, 5).map((a) => a.body.error)).toEqual(Array(5).fill('invalid_grant'));
    for (const a of attempts.slice(6)) expectThrottled(a);
    // The attacker is refused before any check, even with the right password...
    expectThrottled(await tokenFrom(box, attacker, password('kelner', DEMO.staff.password)));
    // ...while the waiter's own tablet signs in, as often as it likes.
    for (let i = 0; i < 3; i++) {
      expect(await tokenFrom(box, '127.0.0.2', password('kelner', DEMO.staff.password))).toMatchObject({ status: 200 });
    }
  });

  test('a wrong client secret is throttled per address; a secret already verified still works there', async () => {
    const attacker = '127.0.0.4';
    // The kiosk's secret verified once, from another address (a kiosk signing in as usual).
    expect(await tokenFrom(box, '127.0.0.8', password('anonymous', ''))).toMatchObject({ status: 200 });
    const wrong = basic(DEMO.client.clientId, 'not-the-secret');
    const attempts: TokenAnswer[] = [];
    for (let i = 0; i < 10; i++) attempts.push(await tokenFrom(box, attacker, password('anonymous', ''), wrong));
    expect(attempts.slice(0, 5).map((a) => [a.status, a.body.error])).toEqual(Array(5).fill([401, 'invalid_client']));
    for (const a of attempts.slice(6)) expectThrottled(a);
    // The kiosk's secret was verified before: remembered, it needs no check and no attempt.
    expect(await tokenFrom(box, attacker, password('anonymous', ''))).toMatchObject({ status: 200 });
    // Another address is not throttled.
    expect(await tokenFrom(box, '127.0.0.5', password('anonymous', ''), wrong)).toMatchObject({ status: 401 });
  });

  test('one address trying many usernames is throttled for every username there', async () => {
    const sprayer = '127.0.0.6';
    const attempts: TokenAnswer[] = [];
    for (let i = 0; i < 22; i++) attempts.push(await tokenFrom(box, sprayer, password(`user-${i}`, 'x')));
    expect(attempts.slice(0, 20).map((a) => a.body.error)).toEqual(Array(20).fill('invalid_grant'));
    for (const a of attempts.slice(20)) expectThrottled(a);
    expectThrottled(await tokenFrom(box, sprayer, password(KUCHNIA.username, KUCHNIA.password)));
    expect(await tokenFrom(box, '127.0.0.7', password(KUCHNIA.username, KUCHNIA.password))).toMatchObject({
      status: 200,
    });
  });
});
