import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { basic, DEMO, startTestBox, type TestBox, type TokenAnswer, tokenFrom } from './support/box.js';

// docs/api.md "Sign-in throttling": guessers on many addresses empty a user's shared budget, but a device the user
// signed in on before (its device token, as a cookie or as the form's `device_token`) has a budget of its own.
// The box runs with the default limits (native-config/venue-box.jsonc "auth.throttle").
let box: TestBox;
beforeAll(async () => {
  box = await startTestBox();
});
afterAll(async () => {
  await box?.stop();
});

/** A password sign-in from a chosen source address (127.0.0.0/8 all reaches the box), with its device's token. */
function signIn(
  localAddress: string,
  username: string,
  password: string,
  extra: { cookie?: string; deviceToken?: string } = {},
): Promise<TokenAnswer> {
  const form: Record<string, string> = { grant_type: 'password', username, password };
  if (extra.deviceToken) form.device_token = extra.deviceToken;
  return tokenFrom(box, localAddress, form, basic(), extra.cookie ? { cookie: extra.cookie } : {});
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const KELNER = DEMO.staff;
/** The `name=value` a browser sends back from a Set-Cookie. */
const cookieOf = (setCookie: string | undefined): string => (setCookie ?? '').split(';')[0]!;

describe('a known device is not locked out by guessers', () => {
  test('40 addresses guess kelner: its tablet (cookie) and app (device_token) sign in every time; strangers wait', async () => {
    // Before the attack: the waiter's tablet (a browser: the cookie) and app (the body's device_token).
    const first = await signIn('127.0.1.1', KELNER.username, KELNER.password);
    expect(first.status).toBe(200);
    const flags = first.setCookie!.split(/;\s*/);
    expect(flags[0]).toMatch(/^vb-device=d1\.\d+\.[\w-]{22}\.[\w-]{22}$/);
    expect(flags.slice(1).sort()).toEqual(['HttpOnly', 'Max-Age=7776000', 'Path=/auth-oauth2', 'SameSite=Strict']);
    let tabletCookie = cookieOf(first.setCookie);
    const app = await signIn('127.0.1.3', KELNER.username, KELNER.password);
    let appToken = app.body.device_token!;
    expect(appToken).toMatch(/^d1\./);
    // kuchnia's device token is kuchnia's: it gives kelner's sign-in nothing.
    const kuchniaToken = (await signIn('127.0.1.4', 'kuchnia', 'kuchnia-demo-1')).body.device_token!;

    const started = Date.now();
    const statuses: number[] = [];
    let attacking = true;
    const attacker = async (i: number) => {
      for (let n = 0; attacking; n++) {
        statuses.push((await signIn(`127.0.2.${i + 1}`, KELNER.username, `guess-${i}-${n}`)).status);
        await sleep(150);
      }
    };
    const attack = Promise.all(Array.from({ length: 40 }, (_, i) => attacker(i)));
    const checkedGuesses = () => statuses.filter((s) => s === 400).length;

    const tablet: number[] = [];
    const appAnswers: number[] = [];
    const fresh: number[] = [];
    const borrowed: number[] = [];
    try {
      await waiter();
    } finally {
      attacking = false;
      await attack;
    }
    const seconds = (Date.now() - started) / 1000;
    async function waiter() {
      // Once the shared budget is gone (its 100 failures checked), the waiter signs in, the attack going on.
      for (const until = Date.now() + 30_000; checkedGuesses() < 100 && Date.now() < until; ) await sleep(100);
      expect(checkedGuesses()).toBeGreaterThanOrEqual(100);
      for (let round = 0; round < 6; round++) {
        const t = await signIn('127.0.1.1', KELNER.username, KELNER.password, { cookie: tabletCookie });
        tablet.push(t.status);
        if (t.setCookie) tabletCookie = cookieOf(t.setCookie);
        const a = await signIn('127.0.1.3', KELNER.username, KELNER.password, { deviceToken: appToken });
        appAnswers.push(a.status);
        appToken = a.body.device_token ?? appToken;
        fresh.push((await signIn('127.0.1.2', KELNER.username, KELNER.password)).status);
        borrowed.push(
          (await signIn('127.0.1.5', KELNER.username, KELNER.password, { deviceToken: kuchniaToken })).status,
        );
        await sleep(500);
      }
    }

    expect(tablet).toEqual(Array(tablet.length).fill(200));
    expect(appAnswers).toEqual(Array(appAnswers.length).fill(200));
    // A device never signed in on (or one presenting another user's token) is a stranger: it shares the
    // emptied budget and waits (documented), as the attackers do.
    expect(fresh).toContain(429);
    expect(borrowed).toContain(429);

    // The guess rate is the shared budget's, as before device tokens: 100 at once, then one per 2 s.
    const checked = checkedGuesses();
    expect(statuses.filter((s) => s !== 400 && s !== 429)).toEqual([]);
    expect(checked, `${checked} guesses checked in ${seconds} s`).toBeLessThanOrEqual(100 + Math.ceil(seconds / 2) + 1);
  }, 60_000);
});
