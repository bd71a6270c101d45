import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CENTRAL_DEMO } from './support/central.js';
import { CONSOLE_VIEWPORT, type ConsoleRig, seriousViolations, signIn, startConsoleRig } from './support/hq-console.js';
import { skipWithout } from './support/system-packages.js';

// The console's frame (docs/console.md "Signing in", "How it behaves"): sign-in at the real central with the
// console's public client, a session that ends under an open page, the read-only user, both languages.
const skip = skipWithout(import.meta.url, 'chromium');
const READ_ONLY = { username: 'analityk', password: 'analityk-demo-1' };
const PAGES = ['/dashboard', '/catalogue', '/fleet', '/orders', '/stock', '/reports'];
/** The views with change controls: each shows the read-only note to such a user. */
const CHANGING = ['/catalogue', '/fleet', '/stock?tab=send', '/orders?tab=new'];

describe.skipIf(skip)('the console in Chromium: sign-in and session', () => {
  let rig: ConsoleRig;
  beforeAll(async () => {
    rig = await startConsoleRig();
  }, 120_000);
  afterAll(async () => {
    await rig?.stop();
  });

  const fresh = async (): Promise<Page> => {
    const context = await rig.browser.newContext({ viewport: CONSOLE_VIEWPORT, bypassCSP: true });
    return context.newPage();
  };

  test('the central serves the sign-in at /; a wrong password is refused with the central message', async () => {
    const page = await fresh();
    await page.goto(rig.central.url('/'));
    const form = page.getByTestId('signin');
    // One tenant at this central: the form does not ask for it.
    expect(await form.locator('input[name=tenant]').count()).toBe(0);
    await form.locator('input[name=username]').fill('centrala');
    await form.locator('input[name=password]').fill('not-the-password');
    await form.locator('button[type=submit]').click();
    await expect.poll(() => page.getByTestId('signin-error').textContent()).toMatch(/password|invalid/i);
    expect(await page.getByTestId('user').count()).toBe(0);
    await signIn(page, 'centrala', 'centrala-demo-1');
    expect(await page.getByTestId('user').textContent()).toBe('centrala');
    expect(await seriousViolations(page)).toEqual([]);
    await page.context().close();
  });

  test('a session that ends under an open page asks to sign in again and keeps what was typed', async () => {
    const page = await fresh();
    await page.clock.install();
    // The reports page: it reads nothing by itself on a timer, so the next call is the one the user makes.
    await page.goto(rig.central.url('/reports'));
    await signIn(page, 'centrala', 'centrala-demo-1');
    await page.waitForLoadState('networkidle');
    const from = page.getByTestId('reports-from');
    const typed = new Date(Date.now() - 3 * 86_400_000).toISOString().slice(0, 10);
    // The refresh token is spent elsewhere (a copy of it used), so the page's own refresh is a reuse: the central
    // revokes the family and the session ends (docs/api.md "Token revocation").
    const saved = JSON.parse((await page.evaluate(() => localStorage.getItem('vb.hq.session'))) ?? 'null');
    const spent = await fetch(rig.central.url('/auth-oauth2/oauth/token'), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-tenant': CENTRAL_DEMO.tenant },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: saved.refreshToken,
        client_id: 'hq-console',
      }).toString(),
    });
    expect(spent.status).toBe(200);
    // Two hours later the access token has expired: the page's next call refreshes, and is refused. A new date
    // in the range applies at once (the report is read for it).
    await page.clock.fastForward('02:00:00');
    await from.fill(typed);
    const dialog = page.locator('dialog[open]');
    await dialog.waitFor({ timeout: 15_000 });
    expect(await dialog.locator('input[name=username]').inputValue()).toBe('centrala');
    expect(await from.inputValue()).toBe(typed);
    await dialog.locator('input[name=password]').fill('centrala-demo-1');
    await dialog.locator('button[type=submit]').click();
    await expect.poll(() => page.locator('dialog[open]').count(), { timeout: 15_000 }).toBe(0);
    // The calls that found the session ended are made again: the report of the range that was typed.
    await page.waitForLoadState('networkidle');
    expect(new URL(page.url()).searchParams.get('from')).toBe(typed);
    expect(await from.inputValue()).toBe(typed);
    expect(await page.getByTestId('form-error').count()).toBe(0);
    await page.context().close();
  });

  test('a read-only user sees every page, with the read-only note and no usable change control', async () => {
    const page = await rig.open('/dashboard', READ_ONLY);
    for (const path of [...PAGES, ...CHANGING]) {
      await page.goto(rig.central.url(path));
      await page.getByTestId('user').waitFor();
      await page.waitForLoadState('networkidle');
      expect(await page.getByTestId('load-error').count(), path).toBe(0);
      if (CHANGING.includes(path))
        await expect.poll(() => page.locator('.note').count(), { message: path }).toBeGreaterThan(0);
    }
    // The central refuses changes from this user whatever the page shows (403).
    await page.goto(rig.central.url('/fleet'));
    expect(await page.getByTestId('fleet-make-code').isDisabled()).toBe(true);
    await page.context().close();
  });

  test('Polish by default, English at a click, remembered after a reload', async () => {
    const page = await rig.open('/dashboard');
    expect(await page.locator('html').getAttribute('lang')).toBe('pl');
    expect(await page.locator('nav').first().textContent()).toContain('Zamówienia');
    await page.getByTestId('language').click();
    await expect.poll(() => page.locator('nav').first().textContent()).toContain('Orders');
    await page.reload();
    await page.getByTestId('user').waitFor();
    expect(await page.locator('html').getAttribute('lang')).toBe('en');
    expect(await page.locator('nav').first().textContent()).toContain('Reports');
    await page.getByTestId('signout').click();
    await page.getByTestId('signin').waitFor();
    await page.reload();
    // Signed out stays signed out: the session is forgotten.
    await page.getByTestId('signin').waitFor();
    await page.context().close();
  });
});
