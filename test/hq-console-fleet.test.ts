import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DEMO, startTestBox, type TestBox } from './support/box.js';
import { type ConsoleRig, startConsoleRig } from './support/hq-console.js';
import { command, newOrder } from './support/orders.js';
import { STORY } from './support/story.js';
import { drained, enrol, FAST_SYNC, hqOrders, syncStatus, waitFor } from './support/sync.js';
import { skipWithout } from './support/system-packages.js';
import { staff } from './warehouse-client.js';

// The console's fleet, dashboard and reports pages (docs/console.md "Pages") against a real central and a box
// enrolled from the fleet page itself: the figures on the pages are checked against the orders the box made.
const skip = skipWithout(import.meta.url, 'chromium');

describe.skipIf(skip)('the fleet, dashboard and reports pages in Chromium', () => {
  let rig: ConsoleRig;
  let box: TestBox | undefined;
  let page: Page;
  let deviceId = '';
  const VENUE = DEMO.openVenue;
  const SALE = ['ORDERED', 'READY', 'COMPLETED'];

  beforeAll(async () => {
    rig = await startConsoleRig();
  }, 90_000);
  afterAll(async () => {
    await box?.stop();
    await rig?.stop();
  });

  /** The venue's date today (the central's "today": Europe/Warsaw for the demo). */
  const todayIn = (timeZone = 'Europe/Warsaw') => new Intl.DateTimeFormat('en-CA', { timeZone }).format(new Date());
  /** A money figure as a page shows it ("1 234,50 zł") or as the API gives it ("1234.50"), in minor units. */
  const minorOf = (text: string) => Number(text.replace(/[^\d-]/g, ''));
  const text = async (testid: string) => ((await page.getByTestId(testid).first().textContent()) ?? '').trim();

  const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

  /**
   * axe-core's serious and critical violations must be none. The central serves the console with `script-src
   * 'self'`, which refuses the inline <script> seriousViolations adds, so axe is evaluated into the page first (an
   * evaluation is no script element).
   */
  async function expectNoSeriousViolations(): Promise<void> {
    await page.evaluate(axeSource);
    const violations = await page.evaluate(async () => {
      const axe = (globalThis as unknown as { axe: { run(): Promise<{ violations: AxeViolation[] }> } }).axe;
      return (await axe.run()).violations;
    });
    expect(
      violations
        .filter((v) => v.impact === 'critical' || v.impact === 'serious')
        .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(' | ')}`),
    ).toEqual([]);
  }
  interface AxeViolation {
    id: string;
    impact: string | null;
    nodes: { target: string[] }[];
  }

  interface BoxOrder {
    id: string;
    status: string;
    orderType: string;
    buckets: {
      venue: string;
      lines: { productId: string; quantity: number; price: string; status: string; product: unknown }[];
    }[];
  }
  /** What the box holds of its orders, and the sales figures computed from it (contract: sales = ORDERED..COMPLETED). */
  let made: BoxOrder[] = [];
  const saleOrders = () => made.filter((o) => SALE.includes(o.status));
  const revenueOf = (o: BoxOrder) =>
    o.buckets
      .filter((b) => b.venue === VENUE)
      .flatMap((b) => b.lines)
      .filter((l) => l.status !== 'CANCELLED')
      .reduce((sum, l) => sum + Math.round(Number(l.price) * 100) * l.quantity, 0);
  const money = (minor: number) => (minor / 100).toFixed(2);

  describe('the fleet, dashboard and reports pages', STORY, () => {
    test('a box enrolled with the code the fleet page makes shows up online in the fleet table', async () => {
      page = await rig.open('/fleet'); // signs in (its checks need a test)
      const form = page.getByTestId('fleet-enrol-form');
      await form.locator('select').selectOption(VENUE);
      await page.getByTestId('fleet-ttl').fill('2');
      const asked = Date.now();
      await page.getByTestId('fleet-make-code').click();
      const code = await text('fleet-enrol-code');
      expect(code).toMatch(/^[0-9A-Z]{4}(-[0-9A-Z]{4}){3}$/);
      const commandLine = await text('fleet-enrol-command');
      expect(commandLine).toBe(`venue-box sync enrol --central ${rig.central.url('')} --code ${code}`);
      const expires = Date.parse((await page.getByTestId('fleet-enrol-expires').getAttribute('data-iso'))!);
      expect(Math.abs(expires - (asked + 2 * 3600_000))).toBeLessThan(120_000);
      await expectNoSeriousViolations();

      // The box types the command the page showed.
      box = await startTestBox({ config: { sync: { ...FAST_SYNC.sync, catalogueWaitSeconds: 20 } } });
      const central = /--central (\S+)/.exec(commandLine)![1]!;
      await enrol(box, central, code);
      deviceId = (await syncStatus(box)).deviceId!;
      expect(deviceId).toBeTruthy();

      // The page reads the fleet again by itself: the new box appears, online, in its venue.
      const link = page.locator(`[data-testid=fleet-device][data-device="${deviceId}"]`);
      await expect.poll(() => link.count(), { timeout: 30_000 }).toBe(1);
      const row = page.locator('[data-testid=fleet-table] tr', { has: link });
      await expect
        .poll(() => row.getByTestId('fleet-state').getAttribute('data-state'), { timeout: 30_000 })
        .toBe('online');
      expect(await row.textContent()).toContain(DEMO.venues.find((v) => v.id === VENUE)!.name);

      // Its details have an address.
      await link.click();
      await expect.poll(() => new URL(page.url()).searchParams.get('id')).toBe(deviceId);
      expect(await page.getByTestId('fleet-details').textContent()).toContain(deviceId);
      await expectNoSeriousViolations();
    }, 120_000);

    test("orders made on the box are the dashboard's figures", async () => {
      expect(box, 'the box enrolled in the first step').toBeDefined();
      const b = box!;
      const s = await staff(b);
      // A: take-away, made ready (kitchen time); B: dine-in, ordered; C: cancelled after ordering; D: a basket.
      const a = await command(
        b,
        s.token,
        'new',
        newOrder(VENUE, [
          { productId: 'zurek', quantity: 2 },
          { productId: 'kompot', quantity: 1 },
        ]),
      );
      const bOrder = await command(b, s.token, 'new', newOrder(VENUE, [{ productId: 'ges', quantity: 1 }], 'DINE_IN'));
      const c = await command(b, s.token, 'new', newOrder(VENUE, [{ productId: 'woda', quantity: 3 }]));
      const d = await command(b, s.token, 'new', newOrder(VENUE, [{ productId: 'kompot', quantity: 1 }]));
      for (const o of [a, bOrder, c]) await command(b, s.token, `${o.orderId}/submit`, {});
      await command(b, s.token, `${a.orderId}/ready`, {});
      await command(b, s.token, `${c.orderId}/cancel`, {});
      const want = { [a.orderId]: 'READY', [bOrder.orderId]: 'ORDERED', [c.orderId]: 'CANCELLED', [d.orderId]: 'NEW' };
      made = await waitFor('the orders in their states at the box', async () => {
        const orders = await Promise.all(
          Object.keys(want).map(
            async (id) => (await (await b.get(`/ordering-api/api/order/${id}`, s.token)).json()) as BoxOrder,
          ),
        );
        return orders.every((o) => o.status === want[o.id]) ? orders : undefined;
      });
      await drained(b);
      // The central holds them as the box does.
      await waitFor('the orders at the central', async () => {
        const atCentral = await hqOrders(rig.central, VENUE);
        return made.every((o) => atCentral.find((x) => x.id === o.id)?.status === o.status);
      });
      expect(saleOrders()).toHaveLength(2);
      const revenue = saleOrders().reduce((sum, o) => sum + revenueOf(o), 0);
      expect(revenue).toBeGreaterThan(0);

      await page.goto(rig.central.url('/dashboard'));
      const venueRow = page.locator('[data-testid=dashboard-venues] tr', {
        has: page.locator(`[data-venue="${VENUE}"]`),
      });
      await expect.poll(() => venueRow.count(), { timeout: 15_000 }).toBe(1);
      const cells = await venueRow.locator('td').allInnerTexts();
      // Venue, then today's orders, revenue, average ticket, kitchen time, then the week's.
      expect(Number(cells[1])).toBe(2);
      expect(minorOf(cells[2]!)).toBe(revenue);
      expect(minorOf(cells[3]!)).toBe(Math.round(revenue / 2));
      expect(Number(cells[5])).toBe(2);
      expect(minorOf(cells[6]!)).toBe(revenue);
      expect(Number(await text('dashboard-today-orders'))).toBe(2);
      expect(minorOf(await text('dashboard-today-revenue'))).toBe(revenue);
      // The fleet at a glance: the one box, online, nothing to raise.
      expect(await text('dashboard-devices')).toBe('1');
      expect(await text('dashboard-online')).toBe('1');
      expect(await text('dashboard-offline')).toBe('0');
      // Orders per hour today: the two sales, in the chart's data table.
      const perHour = await page.locator('[data-testid=dashboard-per-hour] tbody td').allTextContents();
      expect(perHour).toHaveLength(24);
      expect(perHour.reduce((sum, v) => sum + Number(v), 0)).toBe(2);
      await expectNoSeriousViolations();
    }, 120_000);

    test("the reports' figures, and the CSV a report table downloads, are the orders'", async () => {
      expect(made.length, 'the orders of the previous step').toBe(4);
      const today = todayIn();
      const sales = saleOrders();
      const revenue = sales.reduce((sum, o) => sum + revenueOf(o), 0);
      await page.goto(rig.central.url(`/reports?from=${today}&to=${today}&venueId=${VENUE}`));
      await expect.poll(() => page.getByTestId('reports-total-orders').count(), { timeout: 15_000 }).toBe(1);
      expect(await page.getByTestId('reports-from').inputValue()).toBe(today);
      expect(Number(await text('reports-total-orders'))).toBe(2);
      expect(minorOf(await text('reports-total-revenue'))).toBe(revenue);

      // Products: the quantities and revenue of the sold lines (the cancelled order's and the basket's left out).
      const byProduct = new Map<string, { quantity: number; revenue: number }>();
      for (const o of sales)
        for (const l of o.buckets.flatMap((x) => x.lines).filter((x) => x.status !== 'CANCELLED')) {
          const p = byProduct.get(l.productId) ?? { quantity: 0, revenue: 0 };
          byProduct.set(l.productId, {
            quantity: p.quantity + l.quantity,
            revenue: p.revenue + Math.round(Number(l.price) * 100) * l.quantity,
          });
        }
      const productRows = await page.locator('[data-testid=reports-products-table] tbody tr').all();
      expect(productRows).toHaveLength(byProduct.size);
      const shown = await Promise.all(productRows.map((r) => r.locator('td').allInnerTexts()));
      expect(shown.map((c) => [Number(c[1]), minorOf(c[2]!)]).sort()).toEqual(
        [...byProduct.values()].map((p) => [p.quantity, p.revenue]).sort(),
      );

      // Channels: one take-away sale and one dine-in sale.
      const channels = await page.locator('[data-testid=reports-channels-table] tbody tr').all();
      const channelCells = await Promise.all(channels.map((r) => r.locator('td').allInnerTexts()));
      const want = ['TAKE_AWAY', 'DINE_IN'].map((type) => {
        const of = sales.filter((o) => o.orderType === type);
        return [of.length, of.reduce((sum, o) => sum + revenueOf(o), 0)];
      });
      expect(channelCells.map((c) => [Number(c[1]), minorOf(c[2]!)]).sort()).toEqual(want.sort());
      // Kitchen: the one order that reached READY.
      const kitchen = await page.locator('[data-testid=reports-kitchen-table] tbody tr td').allInnerTexts();
      expect(Number(kitchen[1])).toBe(1);

      // The sales table's CSV: the raw figures, as downloaded.
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.getByTestId('reports-sales').getByTestId('csv').click(),
      ]);
      const csv = readFileSync((await download.path())!, 'utf8').replace(/^\uFEFF/, '');
      const lines = csv.trim().split(/\r\n/);
      expect(lines).toHaveLength(2);
      expect(lines[1]!.split(',')).toEqual([
        today,
        DEMO.venues.find((v) => v.id === VENUE)!.name,
        '2',
        money(revenue),
        money(Math.round(revenue / 2)),
      ]);
      expect(download.suggestedFilename()).toMatch(/^sales-day-.*\.csv$/);

      // The filters are the address: by hour, the same figures in today's hours.
      await page.getByTestId('reports-by').selectOption('hour');
      await expect.poll(() => new URL(page.url()).searchParams.get('by')).toBe('hour');
      await expect
        .poll(async () =>
          (await page.locator('[data-testid=reports-sales-table] tbody td').first().textContent())?.trim(),
        )
        .toMatch(new RegExp(`^${today} \\d{2}:00$`));
      await expectNoSeriousViolations();
    }, 60_000);

    test('a box revoked from its page is refused by the central', async () => {
      expect(box && deviceId, 'the box enrolled in the first step').toBeTruthy();
      await page.goto(rig.central.url(`/fleet?id=${deviceId}`));
      await page.getByTestId('fleet-revoke').click();
      await page.getByTestId('fleet-revoke-confirm').click();
      await expect
        .poll(() => page.getByTestId('fleet-details-state').locator('[data-state]').getAttribute('data-state'), {
          timeout: 15_000,
        })
        .toBe('revoked');
      const devices: { id: string; status: string }[] = await rig.central.hq('/hq-api/api/devices');
      expect(devices.find((d) => d.id === deviceId)?.status).toBe('revoked');
      // The box's next batch is refused: its order stays in its outbox with the refusal as the last error.
      const s = await staff(box!);
      await command(box!, s.token, 'new', newOrder(VENUE, [{ productId: 'zurek', quantity: 1 }]));
      const status = await waitFor('the refusal in the box status', async () => {
        const st = await syncStatus(box!);
        return st.lastError !== null && st.backlog > 0 ? st : undefined;
      });
      expect(status.lastError).toBeTruthy();
      await expectNoSeriousViolations();
    }, 60_000);
  });
});
