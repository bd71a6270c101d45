import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DEMO } from './support/box.js';
import { axeViolations, describeViolation } from './support/axe.js';
import { command, newOrder } from './support/orders.js';
import {
  handOver,
  markReady,
  orderIdByClaim,
  type ScreensRig,
  startScreensRig,
  VENUE,
  WAIT,
} from './support/screens.js';
import { skipWithout } from './support/system-packages.js';

// Every screen as staff and customers see it (docs/screens.md "Accessibility and layout"): axe-core finds no
// critical or serious violation, nor the moderate ones the screens once had, in Polish and in English; and at the
// tablet size (1280x800) nothing overflows its box with long data.
const skip = skipWithout(import.meta.url, 'chromium');

/** The moderate rules the screens broke before: one h1 a screen, landmarks told apart, no empty table header. */
const NAMED_RULES = new Set(['page-has-heading-one', 'landmark-unique', 'empty-table-header']);

async function problems(page: Page): Promise<string[]> {
  return (await axeViolations(page))
    .filter((v) => v.impact === 'critical' || v.impact === 'serious' || NAMED_RULES.has(v.id))
    .map(describeViolation);
}

describe.skipIf(skip)('the screens in Chromium: accessibility (axe-core) and layout', () => {
  let rig: ScreensRig;
  const warehouse = DEMO.venues.find((v) => v.id === VENUE)!.warehouse;

  beforeAll(async () => {
    rig = await startScreensRig();
  }, 60_000);
  afterAll(async () => {
    await rig?.stop();
  });

  for (const lang of ['pl', 'en'] as const) {
    test(`${lang}: the sign-in and the kiosk (menu, basket; claim code cooking, ready, handed over) have no serious violation`, async () => {
      const found: Record<string, string[]> = {};
      const page = await rig.open({ lang });
      await page.goto(rig.box.url('/'));
      await page.getByTestId('signin').waitFor(WAIT);
      found.signin = await problems(page);

      await page.goto(rig.box.url(`/kiosk?venue=${VENUE}`));
      await page.locator('[data-testid=kiosk-product][data-product=zurek]').click(WAIT);
      found['kiosk menu'] = await problems(page);
      await page.getByTestId('place-order').click(WAIT);
      const code = (await page.getByTestId('claim-code').textContent(WAIT))!.trim();
      found['kiosk claim'] = await problems(page);
      const orderId = await orderIdByClaim(rig, code);
      await markReady(rig, { orderId, token: (await rig.staff()).access_token });
      await page.locator('[data-testid=claim][data-status=READY]').waitFor(WAIT);
      found['kiosk ready'] = await problems(page);
      await handOver(rig, orderId, code);
      await page.locator('[data-testid=claim][data-status=COMPLETED]').waitFor(WAIT);
      found['kiosk handed over'] = await problems(page);
      expect(found).toEqual({
        signin: [],
        'kiosk menu': [],
        'kiosk claim': [],
        'kiosk ready': [],
        'kiosk handed over': [],
      });
    }, 90_000);

    test(`${lang}: kitchen, pick-up (found, cancelling, handed over), tabs and orders (a row open) have no serious violation`, async () => {
      const cooking = await rig.order(['zurek', 'rosol']);
      const ready = await rig.order(['barszcz']);
      await markReady(rig, ready);
      const page = await rig.open({ lang });
      const found: Record<string, string[]> = {};

      await rig.signIn(page, '/kitchen');
      await page.locator(`[data-testid=kitchen-card][data-claim="${cooking.claimCode}"]`).waitFor(WAIT);
      await page
        .locator(`[data-testid=kitchen-card][data-claim="${ready.claimCode}"][data-status=READY]`)
        .waitFor(WAIT);
      found.kitchen = await problems(page);

      await page.goto(rig.box.url('/pickup'));
      await page.getByTestId('claim-input').fill(ready.claimCode);
      await page.getByTestId('find').click();
      await page.getByTestId('found-order').waitFor(WAIT);
      found.pickup = await problems(page);
      await page.getByTestId('cancel').click();
      await page.getByTestId('cancel-reason').waitFor(WAIT);
      found['pickup cancel form'] = await problems(page);
      await page.getByTestId('complete').click();
      await page.getByTestId('handed-over').waitFor(WAIT);
      found['pickup handed over'] = await problems(page);

      await page.goto(rig.box.url('/tabs'));
      await page.getByTestId('new-tab').click(WAIT);
      await page.getByTestId('tab-detail').waitFor(WAIT);
      await page.getByTestId('add-product').first().click(WAIT);
      await page.locator('[data-testid=tab-detail] .round.unsent').waitFor(WAIT);
      found.tabs = await problems(page);

      await page.goto(rig.box.url('/orders'));
      await page.locator('[data-testid=order-list] tbody tr').first().click(WAIT);
      found['orders, a row open'] = await problems(page);
      expect(found).toEqual({
        kitchen: [],
        pickup: [],
        'pickup cancel form': [],
        'pickup handed over': [],
        tabs: [],
        'orders, a row open': [],
      });
    }, 120_000);

    test(`${lang}: the manager and each of its parts have no serious violation`, async () => {
      const page = await rig.open({ lang });
      await rig.order(['kompot']); // a job in the printers' lists
      const found: Record<string, string[]> = {};
      await rig.signIn(page, '/manager');
      await page.getByTestId('manager-products').click(WAIT);
      await page.getByTestId('product-row').first().waitFor(WAIT);
      found.products = await problems(page);

      await page.getByTestId('manager-printers').click(WAIT);
      await page.locator('[data-testid=printer][data-printer=kitchen][data-status=ok]').waitFor(WAIT);
      await page.locator('[data-testid=printer][data-printer=kitchen]').getByTestId('printer-jobs').click();
      await page.getByTestId('job').first().waitFor(WAIT);
      found.printers = await problems(page);

      await page.getByTestId('manager-stock').click(WAIT);
      await page.getByTestId('form-pz').waitFor(WAIT);
      found.stock = await problems(page);

      await page.getByTestId('manager-sync').click(WAIT);
      await page.getByTestId('standby').waitFor(WAIT);
      found.sync = await problems(page);
      expect(found).toEqual({ products: [], printers: [], stock: [], sync: [] });
    }, 120_000);
  }

  test('at 1280x800 the stock table with long item names and a big tab total stay inside their boxes', async () => {
    const staff = await rig.staff();
    const item = 'maka-pszenna-typ-650-ekologiczna-z-mlyna-pod-krakowem-worek-25kg';
    const pz = await rig.box.post(
      `/warehouse-api/api/warehouse/${warehouse}/documents/pz`,
      staff.access_token,
      { items: [{ id: item, unit: 'kg', qty: 123456.789012 }] },
      { 'x-tenant': DEMO.tenant, 'x-user': staff.UUID },
    );
    expect(pz.status, await pz.text()).toBe(201);
    // A tab worth hundreds of thousands (a banquet's, or a mistyped quantity's): the longest total a tab shows.
    const tab = await command(rig.box, staff.access_token, 'new', newOrder(VENUE, undefined, 'DINE_IN_OPEN'));
    await command(rig.box, staff.access_token, `${tab.orderId}/append`, {
      venue: VENUE,
      lines: Array.from({ length: 12 }, () => ({ productId: 'ges', quantity: 999 })),
    });

    const page = await rig.open({ lang: 'pl' });
    await page.addInitScript(
      ([key, value]) => localStorage.setItem(key!, value!),
      [`vb.items.${warehouse}`, JSON.stringify([item, 'mleko'])],
    );
    await rig.signIn(page, '/manager');
    await page.getByTestId('manager-stock').click(WAIT);
    await page.locator('[data-testid=stock] tr', { hasText: '123' }).waitFor(WAIT);
    expect(await overflowing(page, '[data-testid=stock]', '.card')).toEqual([]);

    await page.goto(rig.box.url('/tabs'));
    await page.getByTestId('tab').first().waitFor(WAIT);
    expect(await overflowing(page, '[data-testid=tab]', '.tab-list')).toEqual([]);
    expect(await pageOverflows(page)).toBe(false);
  }, 90_000);
});

/** The little of the DOM the overflow check reads (this file is compiled without the DOM's types). */
interface Box {
  left: number;
  right: number;
}
interface El {
  scrollWidth: number;
  clientWidth: number;
  tagName: string;
  textContent: string | null;
  getBoundingClientRect(): Box;
  closest(selector: string): El | null;
  querySelectorAll(selector: string): Iterable<El>;
}

/**
 * The elements matching `selector` that overflow: their content is wider than their box, or their box reaches
 * outside their `container` (closest ancestor), or a descendant reaches outside them.
 */
function overflowing(page: Page, selector: string, container: string): Promise<string[]> {
  return page.evaluate(
    ([sel, cont]) => {
      const doc = (globalThis as unknown as { document: El }).document;
      const out: string[] = [];
      const outside = (inner: Box, outer: Box) => inner.left < outer.left - 0.5 || inner.right > outer.right + 0.5;
      for (const el of doc.querySelectorAll(sel!)) {
        const box = el.getBoundingClientRect();
        const parent = el.closest(cont!)?.getBoundingClientRect();
        if (el.scrollWidth > el.clientWidth + 1) out.push(`${sel}: content ${el.scrollWidth} > box ${el.clientWidth}`);
        if (parent && outside(box, parent)) out.push(`${sel}: ${box.left}-${box.right} outside ${cont}`);
        for (const child of el.querySelectorAll('*'))
          if (outside(child.getBoundingClientRect(), box))
            out.push(`${sel} ${child.tagName.toLowerCase()} "${child.textContent?.slice(0, 30)}" outside`);
      }
      return out;
    },
    [selector, container],
  );
}

/** The page scrolls sideways: something is wider than the screen. */
const pageOverflows = (page: Page): Promise<boolean> =>
  page.evaluate(() => {
    const root = (globalThis as unknown as { document: { documentElement: El } }).document.documentElement;
    return root.scrollWidth > root.clientWidth;
  });
