import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { DEMO, startTestBox, type TestBox, type TokenBody } from './box.js';
import { type FakeTcpPrinter, startFakeTcpPrinter } from './fake-printer.js';
import { command, newOrder } from './orders.js';
import { CHROMIUM_ARGS, SYSTEM_PACKAGES } from './system-packages.js';

/**
 * The box's screens (README "Screens") in Debian's Chromium, for tests that look at them as staff and customers
 * see them: a real demo box with a network kitchen printer and a counter printer (fake, on TCP), and pages each in
 * a context of its own (its own localStorage: language, session), at the tablet size the screens are made for.
 */
export interface ScreensRig {
  box: TestBox;
  printers: FakeTcpPrinter[];
  browser: Browser;
  /** A new page of a new context in `lang`, optionally in another time zone than the venue's or at another size. */
  open(o?: PageOptions): Promise<Page>;
  /** `page` signed in as kelner (a staff user), left on `path`. */
  signIn(page: Page, path: string): Promise<void>;
  /** A customer's TAKE_AWAY order of `products` at the demo's open venue, submitted; its claim code. */
  order(products: string[]): Promise<{ orderId: string; claimCode: string; token: string }>;
  /** A staff token (kelner). */
  staff(): Promise<TokenBody>;
  stop(): Promise<void>;
}

export interface PageOptions {
  lang?: 'pl' | 'en';
  /** The device's time zone (default: one far from the venue's Europe/Warsaw, so a wrong zone shows). */
  timezoneId?: string;
  viewport?: { width: number; height: number };
}

export const TABLET = { width: 1280, height: 800 };
export const VENUE = DEMO.openVenue;
export const WAIT = { timeout: 20_000 };

export async function startScreensRig(config: Record<string, unknown> = {}): Promise<ScreensRig> {
  const kitchen = await startFakeTcpPrinter('kitchen');
  const counter = await startFakeTcpPrinter('counter');
  let box: TestBox | undefined;
  let browser: Browser | undefined;
  const contexts: BrowserContext[] = [];
  try {
    box = await startTestBox({
      config: {
        printers: [
          { name: 'kitchen', venue: VENUE, role: 'kitchen', host: '127.0.0.1', port: kitchen.port },
          { name: 'counter', venue: VENUE, role: 'counter', host: '127.0.0.1', port: counter.port },
        ],
        printing: { statusPollSeconds: 0.5, retryMinMs: 100, retryMaxMs: 500 },
        ...config,
      },
    });
    browser = await chromium.launch({ executablePath: SYSTEM_PACKAGES.chromium, headless: true, args: CHROMIUM_ARGS });
  } catch (err) {
    await box?.stop();
    await kitchen.stop();
    await counter.stop();
    throw err;
  }
  const theBox = box;
  const rig: ScreensRig = {
    box: theBox,
    printers: [kitchen, counter],
    browser,
    async open(o = {}) {
      // bypassCSP: axe-core is injected as an inline script, which the screens' CSP (script-src 'self') refuses.
      const context = await browser!.newContext({
        viewport: o.viewport ?? TABLET,
        bypassCSP: true,
        timezoneId: o.timezoneId ?? 'America/Los_Angeles',
        locale: 'en-US',
      });
      contexts.push(context);
      // The device's own choice of language (i18n.tsx keeps it in localStorage).
      await context.addInitScript((lang) => localStorage.setItem('vb.lang', lang), o.lang ?? 'pl');
      return context.newPage();
    },
    async signIn(page, path) {
      await page.goto(theBox.url('/'));
      await page.getByTestId('signin').waitFor(WAIT);
      await page.locator('input[name=username]').fill('kelner');
      await page.locator('input[name=password]').fill('kelner-demo-1');
      await page.locator('button[type=submit]').click();
      await page.getByTestId('sign-out').waitFor(WAIT);
      await page.goto(theBox.url(path));
      await page.getByTestId('sign-out').waitFor(WAIT);
    },
    async order(products) {
      const token = (await theBox.token()).access_token;
      const lines = products.map((productId) => ({ productId, quantity: 1 }));
      const { orderId } = await command(theBox, token, 'new', newOrder(VENUE, lines));
      await command(theBox, token, `${orderId}/submit`, {});
      for (let i = 0; i < 200; i++) {
        const order = (await (await theBox.get(`/ordering-api/api/order/${orderId}`, token)).json()) as {
          status: string;
          claimCode: string;
        };
        if (order.status === 'ORDERED') return { orderId, claimCode: order.claimCode, token };
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`order ${orderId} never reached ORDERED`);
    },
    staff: () => theBox.token('kelner', 'kelner-demo-1'),
    async stop() {
      for (const c of contexts) await c.close().catch(() => undefined);
      await browser?.close();
      await theBox.stop();
      await kitchen.stop();
      await counter.stop();
    },
  };
  return rig;
}

/** The id of the venue's open order with this claim code (a kiosk's order, placed in the browser). */
export async function orderIdByClaim(rig: ScreensRig, claimCode: string): Promise<string> {
  const staff = (await rig.staff()).access_token;
  const res = await rig.box.get(`/ordering-api/api/orders?venue=${VENUE}&status=ORDERED,READY&limit=200`, staff);
  const { items } = (await res.json()) as { items: { id: string; claimCode: string }[] };
  const order = items.find((o) => o.claimCode === claimCode);
  if (!order) throw new Error(`no open order with claim code ${claimCode}`);
  return order.id;
}

/** Staff hands the order over (`complete` with its claim code). */
export async function handOver(rig: ScreensRig, orderId: string, claimCode: string): Promise<void> {
  await command(rig.box, (await rig.staff()).access_token, `${orderId}/complete`, { claimCode });
}

/** Staff marks the order READY (the kitchen's "ready") and waits until the box has applied it. */
export async function markReady(rig: ScreensRig, order: { orderId: string; token: string }): Promise<void> {
  const staff = (await rig.staff()).access_token;
  await command(rig.box, staff, `${order.orderId}/ready`, {});
  await expect
    .poll(
      async () =>
        (
          (await (await rig.box.get(`/ordering-api/api/order/${order.orderId}`, order.token)).json()) as {
            status: string;
          }
        ).status,
      WAIT,
    )
    .toBe('READY');
}
