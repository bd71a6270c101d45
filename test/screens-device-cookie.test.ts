import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DEMO, tokenFrom } from './support/box.js';
import { type ScreensRig, startScreensRig, WAIT } from './support/screens.js';
import { skipWithout } from './support/system-packages.js';

// docs/api.md "Sign-in throttling", "Known devices": the screens' sign-in in Chromium keeps the device cookie
// by itself and sends it at the next sign-in, so a tablet kelner signed in on is not locked out when guessers
// have emptied kelner's shared budget. That budget is small here (3 failures, refilled one per 10 min), so a few
// guesses empty it.
const skip = skipWithout(import.meta.url, 'chromium');

describe.skipIf(skip)('the screens keep the device cookie', () => {
  let rig: ScreensRig;
  beforeAll(async () => {
    rig = await startScreensRig({ auth: { throttle: { account: { burst: 3, refillSeconds: 600 } } } });
  });
  afterAll(async () => {
    await rig?.stop();
  });

  const signInAgain = async (page: Awaited<ReturnType<ScreensRig['open']>>) => {
    await page.goto(rig.box.url('/'));
    await page.getByTestId('signin').waitFor(WAIT);
    await page.locator('input[name=username]').fill(DEMO.staff.username);
    await page.locator('input[name=password]').fill(DEMO.staff.password);
    await page.locator('button[type=submit]').click();
  };

  test('a tablet kelner signed in on signs in again while guessers lock strangers out', async () => {
    const tablet = await rig.open();
    await rig.signIn(tablet, '/');
    const cookies = await tablet.context().cookies();
    expect(cookies.find((c) => c.name === 'vb-device')).toMatchObject({
      httpOnly: true,
      sameSite: 'Strict',
      path: '/auth-oauth2',
      secure: false,
      value: expect.stringMatching(/^d1\./),
    });
    // Invisible to the page's scripts (HttpOnly).
    expect(await tablet.evaluate('document.cookie')).not.toContain('vb-device');
    await tablet.getByTestId('sign-out').click();

    // Guessers on three addresses empty kelner's shared budget: kelner's right password from a new device waits.
    for (const address of ['127.0.3.1', '127.0.3.2', '127.0.3.3']) {
      expect(
        (await tokenFrom(rig.box, address, { grant_type: 'password', username: 'kelner', password: 'x' })).status,
      ).toBe(400);
    }
    const stranger = await rig.open();
    await signInAgain(stranger);
    await expect(stranger.getByTestId('signin-error').textContent(WAIT)).resolves.toMatch(/too many failed sign-ins/);

    // The tablet sends its cookie and signs in.
    await signInAgain(tablet);
    await tablet.getByTestId('sign-out').waitFor(WAIT);
  }, 90_000);
});
