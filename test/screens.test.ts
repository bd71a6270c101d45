import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DEMO, type Launched, launch, requestToken, type TokenBody } from './support/box.js';
import { type FakePrinter, STATUS_OK, STATUS_PAPER_OUT, startFakePrinter } from './support/fake-printer.js';
import { CHROMIUM_ARGS, SYSTEM_PACKAGES, skipWithout } from './support/system-packages.js';

// The box's own screens (README "Screens") in a real browser: Debian's Chromium driven by playwright-core, one
// box (and its data dir and port) for the whole file, restarted once on the same data dir and port.
const CHROMIUM = SYSTEM_PACKAGES.chromium;
const skip = skipWithout(import.meta.url, 'chromium', 'socat');

const VENUE = DEMO.openVenue;
const WAIT = { timeout: 20_000 };

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe.skipIf(skip)('the screens in Chromium', () => {
  let dir: string;
  let dataDir: string;
  let configFile: string;
  let box: Launched;
  let port: number;
  let printer: FakePrinter;
  let browser: BrowserContext;
  let kitchen: Page;
  let kiosk: Page;
  let staffPage: Page;
  const url = (path: string) => `http://127.0.0.1:${port}${path}`;

  /** The real box (dist/main.cjs) on `port` (0: a free one), the demo, the data dir and config of this file. */
  async function startBox(atPort: number): Promise<Launched> {
    const args = [
      'dist/main.cjs',
      'serve',
      '--demo',
      '--host',
      '127.0.0.1',
      '--port',
      String(atPort),
      '--data-dir',
      dataDir,
      '--config',
      configFile,
    ];
    for (let attempt = 1; ; attempt++) {
      try {
        return await launch(spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] }), 'box');
      } catch (err) {
        // The port may be held for a moment by something else on this busy machine: try again, as systemd would.
        if (attempt >= 20 || !String(err).includes('cannot listen')) throw err;
        console.warn(
          `screens: port ${atPort} busy, attempt ${attempt}:`,
          execFileSync('ss', ['-tanp'], { encoding: 'utf8' })
            .split('\n')
            .filter((l) => l.includes(`:${atPort} `))
            .join('\n'),
        );
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }

  async function stopBox(): Promise<void> {
    if (box.proc.exitCode === null && box.proc.signalCode === null) box.proc.kill('SIGTERM');
    await box.exited;
  }

  async function staffToken(): Promise<TokenBody> {
    const res = await requestToken({ url }, { grant_type: 'password', username: 'kelner', password: 'kelner-demo-1' });
    return (await res.json()) as TokenBody;
  }

  /** A customer's order through the API (new then submit), as another kiosk or a phone would place it. */
  async function apiOrder(productId: string, note?: string): Promise<{ orderId: string; claimCode: string }> {
    const res = await requestToken({ url }, { grant_type: 'password', username: 'anonymous', password: '' });
    const token = ((await res.json()) as TokenBody).access_token;
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const line = { productId, quantity: 1, ...(note ? { extra: { note } } : {}) };
    const created = await fetch(url('/ordering-api/api/order/new'), {
      method: 'POST',
      headers,
      body: JSON.stringify({ orderType: 'TAKE_AWAY', buckets: [{ venue: VENUE, lines: [line] }] }),
    });
    expect(created.status).toBe(200);
    const { orderId } = (await created.json()) as { orderId: string };
    expect(
      (await fetch(url(`/ordering-api/api/order/${orderId}/submit`), { method: 'POST', headers, body: '{}' })).status,
    ).toBe(200);
    for (let i = 0; i < 100; i++) {
      const order = (await (await fetch(url(`/ordering-api/api/order/${orderId}`), { headers })).json()) as {
        status: string;
        claimCode: string;
      };
      if (order.status === 'ORDERED') return { orderId, claimCode: order.claimCode };
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`order ${orderId} never reached ORDERED`);
  }

  async function signIn(page: Page, username: string, password: string): Promise<void> {
    await page.goto(url('/'));
    await page.getByTestId('signin').waitFor(WAIT);
    await page.locator('input[name=username]').fill(username);
    await page.locator('input[name=password]').fill(password);
    await page.locator('button[type=submit]').click();
    await page.getByTestId('sign-out').waitFor(WAIT);
  }

  /**
   * The pages share one profile, so one session: signs it in as kuchnia unless a test before this one already
   * did (tests run in any order, test/support/story.ts), and leaves `page` on `path`.
   */
  async function signedIn(page: Page, path: string): Promise<void> {
    await page.goto(url('/'));
    await page.getByTestId('signin').or(page.getByTestId('sign-out')).first().waitFor(WAIT);
    if (await page.getByTestId('signin').isVisible()) await signIn(page, 'kuchnia', 'kuchnia-demo-1');
    await page.goto(url(path));
    await page.getByTestId('sign-out').waitFor(WAIT);
  }

  /** Signs the shared session out if a test before this one signed it in, and leaves `page` on the sign-in. */
  async function signedOut(page: Page): Promise<void> {
    await page.goto(url('/'));
    await page.getByTestId('signin').or(page.getByTestId('sign-out')).first().waitFor(WAIT);
    if (await page.getByTestId('sign-out').isVisible()) await page.getByTestId('sign-out').click();
    await page.getByTestId('signin').waitFor(WAIT);
  }

  const card = (claimCode: string) => kitchen.locator(`[data-testid=kitchen-card][data-claim="${claimCode}"]`);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'vb-screens-'));
    dataDir = join(dir, 'data');
    printer = await startFakePrinter(dir, 'kitchen');
    configFile = join(dir, 'config.json');
    writeFileSync(
      configFile,
      JSON.stringify({
        printers: [{ name: 'kitchen', venue: VENUE, role: 'kitchen', path: printer.boxPath }],
        printing: { statusPollSeconds: 0.5, retryMinMs: 100, retryMaxMs: 500 },
      }),
    );
    // An explicit port from the start: Linux does not let a port that bind(0) picked be bound again while the
    // old box's connections linger in TIME_WAIT, even with SO_REUSEADDR (measured here: 10 s of EADDRINUSE).
    box = await startBox(await freePort());
    port = box.port;
    // A fresh profile (--user-data-dir, which playwright takes as this first argument) under the run's TMPDIR.
    browser = await chromium.launchPersistentContext(join(dir, 'chromium'), {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1280, height: 800 },
      args: CHROMIUM_ARGS,
    });
    kitchen = await browser.newPage();
    kiosk = await browser.newPage();
    staffPage = await browser.newPage();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    if (box) await stopBox();
    await printer?.stop();
  });

  test("/ shows the sign-in; a wrong password shows the box's message; a reload keeps the session", async () => {
    await signedOut(kitchen);
    await kitchen.goto(url('/'));
    await kitchen.getByTestId('signin').waitFor(WAIT);
    await kitchen.locator('input[name=username]').fill('kuchnia');
    await kitchen.locator('input[name=password]').fill('wrong');
    await kitchen.locator('button[type=submit]').click();
    await expect(kitchen.getByTestId('signin-error').textContent(WAIT)).resolves.toMatch(/\S/);
    await signIn(kitchen, 'kuchnia', 'kuchnia-demo-1');
    await kitchen.reload();
    await kitchen.getByTestId('sign-out').waitFor(WAIT);
    // The other staff page shares the profile, so the session too (localStorage).
    await staffPage.goto(url('/pickup'));
    await staffPage.getByTestId('sign-out').waitFor(WAIT);
  }, 60_000);

  test('a kiosk order appears on the kitchen display; "ready" turns the kiosk to ready; the waiter hands it over', async () => {
    await signedIn(staffPage, '/pickup');
    await kitchen.goto(url('/kitchen'));
    await kiosk.goto(url(`/kiosk?venue=${VENUE}`));
    await kiosk.locator('[data-testid=kiosk-product][data-product=zurek]').click(WAIT);
    await kiosk.locator('[data-testid=kiosk-product][data-product=rosol]').click(WAIT);
    await kiosk.getByTestId('place-order').click(WAIT);
    const code = (await kiosk.getByTestId('claim-code').textContent(WAIT))!.trim();
    expect(code).toMatch(/^\d{6}$/);
    await expect(kiosk.getByTestId('claim').getAttribute('data-status')).resolves.toBe('ORDERED');

    await card(code).waitFor(WAIT);
    await kitchen.getByTestId('offline').waitFor({ state: 'detached', ...WAIT });
    await expect(card(code).textContent()).resolves.toMatch(/Żurek[\s\S]*Rosół|Rosół[\s\S]*Żurek/);
    await card(code).getByTestId('ready').click();
    await kiosk.locator('[data-testid=claim][data-status=READY]').waitFor(WAIT);
    await card(code).locator('xpath=self::*[@data-status="READY"]').waitFor(WAIT);

    await staffPage.goto(url('/pickup'));
    await staffPage.getByTestId('claim-input').fill(code);
    await staffPage.getByTestId('find').click();
    await staffPage.locator('[data-testid=found-order][data-status=READY]').waitFor(WAIT);
    await staffPage.getByTestId('complete').click();
    await card(code).waitFor({ state: 'detached', ...WAIT });
    await kiosk.locator('[data-testid=claim][data-status=COMPLETED]').waitFor(WAIT);
  }, 90_000);

  test("a wrong claim code is not found; a refused PZ shows the box's message; a good one shows in the stock", async () => {
    await signedIn(staffPage, '/pickup');
    await staffPage.getByTestId('claim-input').fill('000000');
    await staffPage.getByTestId('find').click();
    await staffPage.getByTestId('not-found').waitFor(WAIT);

    await staffPage.goto(url('/manager'));
    await staffPage.getByTestId('manager-stock').click(WAIT);
    const pz = staffPage.getByTestId('form-pz');
    await pz.getByTestId('row-id').fill('mleko');
    await pz.getByTestId('row-unit').fill('l');
    await pz.getByTestId('row-qty').fill('1.1234567'); // more than 6 decimals: the box refuses it (400 invalidField)
    await pz.getByTestId('post-pz').click();
    await expect(staffPage.getByTestId('error').first().textContent(WAIT)).resolves.toMatch(/qty|decimal/i);
    await pz.getByTestId('row-qty').fill('12,5');
    await pz.getByTestId('post-pz').click();
    await staffPage.locator('[data-testid=stock] tr', { hasText: 'mleko' }).filter({ hasText: '12.5' }).waitFor(WAIT);
  }, 60_000);

  test('the box stops and restarts on the same data dir and port: the display catches up with nothing lost', async () => {
    await signedIn(kitchen, '/kitchen');
    const before = await apiOrder('zurek', 'bez jajka');
    await card(before.claimCode).waitFor(WAIT);
    await expect(card(before.claimCode).getByTestId('note').textContent()).resolves.toBe('bez jajka');

    await stopBox();
    await kitchen.getByTestId('offline').waitFor(WAIT);
    // Freeze the page (no timer runs, so no reconnect) while the box restarts and orders change: whatever happens
    // now reaches the display only through the replay after its reconnect with ?since=.
    const cdp = await browser.newCDPSession(kitchen);
    await cdp.send('Page.setWebLifecycleState', { state: 'frozen' });
    box = await startBox(port);
    const staff = await staffToken();
    const after = [await apiOrder('rosol'), await apiOrder('barszcz'), await apiOrder('placki')];
    const ready = await fetch(url(`/ordering-api/api/order/${before.orderId}/ready`), {
      method: 'POST',
      headers: { authorization: `Bearer ${staff.access_token}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(ready.status).toBe(200);
    await cdp.send('Page.setWebLifecycleState', { state: 'active' });

    await kitchen.getByTestId('offline').waitFor({ state: 'detached', ...WAIT });
    for (const order of after) await card(order.claimCode).waitFor(WAIT);
    await kitchen
      .locator(`[data-testid=kitchen-card][data-claim="${before.claimCode}"][data-status=READY]`)
      .waitFor(WAIT);
  }, 90_000);

  test('a sold-out toggle on the manager screen shows on the kiosk; a basket that still holds it is refused', async () => {
    await signedIn(staffPage, '/');
    await kiosk.goto(url(`/kiosk?venue=${VENUE}`));
    const barszcz = kiosk.locator('[data-testid=kiosk-product][data-product=barszcz]');
    await expect(barszcz.getAttribute('data-sold-out', WAIT)).resolves.toBe('false');
    await barszcz.click();

    await staffPage.goto(url('/manager'));
    await staffPage.getByTestId('manager-products').click(WAIT);
    const row = staffPage.locator('[data-testid=product-row][data-product=barszcz]');
    await row.getByTestId('sold-out-toggle').click(WAIT);
    await kiosk
      .locator('[data-testid=kiosk-product][data-product=barszcz][data-sold-out=true]')
      .waitFor({ timeout: 30_000 });
    await expect(barszcz.isDisabled()).resolves.toBe(true);
    // The basket still holds it: the box refuses the order (a NOTIFICATION), and the kiosk shows its message.
    await kiosk.getByTestId('place-order').click();
    await expect(kiosk.getByTestId('kiosk-error').textContent(WAIT)).resolves.toContain('barszcz');

    await row.getByTestId('sold-out-toggle').click(WAIT);
    await kiosk
      .locator('[data-testid=kiosk-product][data-product=barszcz][data-sold-out=false]')
      .waitFor({ timeout: 30_000 });
  }, 90_000);

  test("a printer's paper-out shows on the manager screen, and its return", async () => {
    await signedIn(staffPage, '/manager');
    await staffPage.getByTestId('manager-printers').click(WAIT);
    const kitchenPrinter = staffPage.locator('[data-testid=printer][data-printer=kitchen]');
    await staffPage.locator('[data-testid=printer][data-printer=kitchen][data-status=ok]').waitFor(WAIT);
    printer.status = STATUS_PAPER_OUT;
    await staffPage.locator('[data-testid=printer][data-printer=kitchen][data-status=paperOut]').waitFor(WAIT);
    await expect(kitchenPrinter.getByTestId('printer-status').textContent()).resolves.toBe('Brak papieru');
    printer.status = STATUS_OK;
    await staffPage.locator('[data-testid=printer][data-printer=kitchen][data-status=ok]').waitFor(WAIT);
  }, 60_000);

  test("the manager's sync part shows the standby panel: a single box, no peer, no warning", async () => {
    await signedIn(staffPage, '/manager');
    await staffPage.getByTestId('manager-sync').click(WAIT);
    const panel = staffPage.locator('[data-testid=standby][data-role=single]');
    await panel.waitFor(WAIT);
    await expect(panel.getByRole('heading').textContent()).resolves.toBe('Zapasowy box');
    await expect(panel.getByTestId('standby-role').textContent()).resolves.toBe('pojedynczy: bez zapasowego boxu');
    await expect(panel.getByTestId('standby-peer').textContent()).resolves.toBe('—');
    await expect(panel.getByTestId('standby-last-takeover').textContent()).resolves.toBe('nigdy');
    await expect(staffPage.getByTestId('standby-warning').count()).resolves.toBe(0);
  }, 60_000);

  test('the language switches to English and stays so after a reload', async () => {
    await signedIn(staffPage, '/kitchen');
    await staffPage.getByTestId('language').click(WAIT);
    await staffPage.getByText('Sign out').waitFor(WAIT);
    await staffPage.reload();
    await staffPage.getByText('Sign out').waitFor(WAIT);
    await staffPage.getByTestId('language').click(WAIT);
    await staffPage.getByText('Wyloguj').waitFor(WAIT);
    await staffPage.getByTestId('sign-out').click();
    await staffPage.getByTestId('signin').waitFor(WAIT);
  }, 60_000);
});
