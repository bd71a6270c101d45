import { createHash } from 'node:crypto';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { openCentralDatabase } from '../src/central/db/open.js';
import { provision } from '../src/central/modules/tenants/provision.js';
import demo from '../native-config/demo.json';
import { DEMO } from './support/box.js';
import { CENTRAL_DEMO } from './support/central.js';
import { CONSOLE_VIEWPORT, type ConsoleRig, seriousViolations, signIn, startConsoleRig } from './support/hq-console.js';
import { waitFor } from './support/sync.js';
import { skipWithout } from './support/system-packages.js';

/**
 * The console's catalogue page (docs/console.md "Pages") against a real central and a real enrolled box: what is
 * changed in the browser is what the central holds and what the box serves.
 */
const skip = skipWithout(import.meta.url, 'chromium');

describe.skipIf(skip)('the catalogue page in Chromium', () => {
  let rig: ConsoleRig;
  beforeAll(async () => {
    rig = await startConsoleRig({ box: true });
  }, 120_000);
  afterAll(async () => {
    await rig?.stop();
  });

  const MENU = DEMO.menu;
  const OPEN_VENUE = DEMO.openVenue;
  /** Another venue of the demo: its hours change here, so the open venue's menu stays orderable. */
  const OTHER_VENUE = DEMO.venues[1]!.id;
  const READ_USER = { username: 'podglad', password: 'podglad-demo-1' };

  const catalogueOf = () => rig.central.hq('/hq-api/api/catalogue');
  const itemOf = async (type: string, id: string) =>
    ((await catalogueOf()).items as any[]).find((i) => i.type === type && i.id === id);

  /** The box's menu for the open venue (GET /menu-api/api/menu/{menu}: docs/api.md). */
  async function boxMenu(): Promise<any> {
    const box = rig.box!;
    const token = (await box.token()).access_token;
    const res = await box.get(`/menu-api/api/menu/${MENU}?channel=TAKE_AWAY&instance=${OPEN_VENUE}`, token);
    expect(res.status).toBe(200);
    return res.json();
  }
  const productIn = (node: any, id: string): any =>
    node.kind === 'svc/product'
      ? node.id === id
        ? node
        : undefined
      : node.items.map((n: any) => productIn(n, id)).find(Boolean);

  async function openMenu(page: Page, productId: string): Promise<void> {
    await page.goto(rig.central.url(`/catalogue?tab=menus&id=${MENU}`));
    await page.getByTestId(`node-${productId}`).click();
    await expect.poll(() => page.getByTestId('product-editor').count()).toBe(1);
  }

  async function openVenue(page: Page, venueId: string): Promise<void> {
    await page.goto(rig.central.url(`/catalogue?tab=venues&id=${venueId}`));
    await expect.poll(() => page.getByTestId('venue-editor').count()).toBe(1);
  }

  test("a price changed in the console is what the box's menu serves; the boxes panel says when the box has it", async () => {
    const page = await rig.open(`/catalogue?tab=menus&id=${MENU}`);
    await openMenu(page, 'zurek');
    await page.getByTestId('product-price').fill('21.50');
    const savedAt = Date.now();
    await page.getByTestId('menu-save').click();
    await expect.poll(() => page.getByTestId('saved-rev').count(), { timeout: 10_000 }).toBe(1);
    const menu = await itemOf('menu', MENU);
    expect(productIn(menu.data.root, 'zurek').price).toBe('21.50');
    await waitFor(
      "the box's menu at the new price",
      async () => productIn((await boxMenu()).root, 'zurek')?.price === '21.50',
      30_000,
    );
    // The panel reads what each box applied: the enrolled box reaches the change's rev.
    await expect.poll(() => page.getByTestId('box-has-it').count(), { timeout: 20_000 }).toBe(1);
    // ...and when it got it: the central's record of the box first asking with that rev, shown on the page.
    const status = (await rig.central.hq('/hq-api/api/catalogue/status')) as {
      rev: number;
      devices: { catalogueRev: number; catalogueRevAt: string | null }[];
    };
    const got = status.devices.find((d) => d.catalogueRev >= status.rev)?.catalogueRevAt;
    expect(Date.parse(got ?? '')).toBeGreaterThanOrEqual(savedAt - 1000);
    expect(await page.getByTestId('box-has-it').textContent()).toMatch(/\d{2}:\d{2}/);
    // "Change the price everywhere": one PATCH, every menu listing the product; the edit goes on from the new rev.
    await page.getByTestId('product-price').fill('22.00');
    await page.getByTestId('price-everywhere').click();
    await expect
      .poll(() => page.getByTestId('price-everywhere-result').textContent(), { timeout: 10_000 })
      .toContain(MENU);
    // The open edit goes on from the new rev once the page has read it: nothing left unsaved.
    await expect.poll(() => page.getByTestId('menu-save').isDisabled(), { timeout: 10_000 }).toBe(true);
    expect(productIn((await itemOf('menu', MENU)).data.root, 'zurek').price).toBe('22.00');
    await waitFor(
      'the price set everywhere on the box',
      async () => productIn((await boxMenu()).root, 'zurek')?.price === '22.00',
      30_000,
    );
    await page.context().close();
  });

  test("venue hours edited per day, Monday copied to all days: the central's catalogue holds them", async () => {
    const page = await rig.open(`/catalogue?tab=venues&id=${OTHER_VENUE}`);
    await openVenue(page, OTHER_VENUE);
    const before = await itemOf('venue', OTHER_VENUE);
    // Monday's intervals removed, then two added and typed.
    while ((await page.getByTestId('remove-interval-DELIVERY-MON-0').count()) > 0) {
      await page.getByTestId('remove-interval-DELIVERY-MON-0').click();
    }
    await page.getByTestId('add-interval-DELIVERY-MON').click();
    await page.getByTestId('add-interval-DELIVERY-MON').click();
    await page.getByTestId('hours-DELIVERY-MON-0-from').fill('09:00');
    await page.getByTestId('hours-DELIVERY-MON-0-to').fill('21:30');
    await page.getByTestId('hours-DELIVERY-MON-1-from').fill('22:00');
    await page.getByTestId('hours-DELIVERY-MON-1-to').fill('23:00');
    await page.getByTestId('copy-monday-DELIVERY').click();
    await page.getByTestId('min-order-DELIVERY').fill('55.00');
    await page.getByTestId('venue-save').click();
    await expect.poll(() => page.getByTestId('saved-rev').count(), { timeout: 10_000 }).toBe(1);
    const after = await itemOf('venue', OTHER_VENUE);
    expect(after.rev).toBeGreaterThan(before.rev);
    const delivery = after.data.channelConstraints.DELIVERY;
    for (const day of ['MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT', 'SUN']) {
      expect(delivery.week[day]).toEqual([
        { from: '09:00', to: '21:30' },
        { from: '22:00', to: '23:00' },
      ]);
    }
    expect(delivery.minOrderValue).toBe('55.00');
    // The other channels were left as they were.
    expect(after.data.channelConstraints.TAKE_AWAY).toEqual(before.data.channelConstraints.TAKE_AWAY);
    await page.context().close();
  });

  test("a coordinate out of range shows the central's message next to the field, and nothing is saved", async () => {
    const page = await rig.open(`/catalogue?tab=venues&id=${OTHER_VENUE}`);
    await openVenue(page, OTHER_VENUE);
    const before = await itemOf('venue', OTHER_VENUE);
    await page.getByTestId('venue-name').fill('Nazwa, która nie powinna się zapisać');
    await page.getByTestId('venue-lat').fill('91');
    await page.getByTestId('venue-save').click();
    const latField = page.locator('.field', { has: page.getByTestId('venue-lat') });
    await expect.poll(() => latField.getByTestId('field-error').count(), { timeout: 10_000 }).toBe(1);
    // The central's own check of /geoPosition/lat (at most 90), in the page's language, under the field it names.
    expect(await latField.getByTestId('field-error').textContent()).toBe('najwyżej 90');
    expect(await page.getByTestId('venue-lat').getAttribute('aria-invalid')).toBe('true');
    // The other fields carry no error, and the central holds the venue as before.
    expect(
      await page
        .locator('.field', { has: page.getByTestId('venue-name') })
        .getByTestId('field-error')
        .count(),
    ).toBe(0);
    expect(await itemOf('venue', OTHER_VENUE)).toEqual(before);
    await page.context().close();
  });

  /** The smallest PNG: 1x1, one red pixel (signature, IHDR, IDAT, IEND). */
  const PNG = Buffer.from(
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==',
    'base64',
  );

  test('an image uploaded in the console, previewed first and saved in the menu, is served by the box', async () => {
    const page = await rig.open(`/catalogue?tab=menus&id=${MENU}`);
    await openMenu(page, 'rosol');
    await page.getByTestId('image-file').setInputFiles({ name: 'rosol.png', mimeType: 'image/png', buffer: PNG });
    await expect.poll(() => page.getByTestId('image-preview').count()).toBe(1);
    await page.getByTestId('image-upload').click();
    const name = `${createHash('sha256').update(PNG).digest('hex')}.png`;
    await expect.poll(() => page.getByTestId('image-url').inputValue(), { timeout: 10_000 }).toBe(`/media/${name}`);
    await page.getByTestId('menu-save').click();
    await expect.poll(() => page.getByTestId('saved-rev').count(), { timeout: 10_000 }).toBe(1);
    const menu = await itemOf('menu', MENU);
    expect(productIn(menu.data.root, 'rosol').details.media[0]).toEqual({ url: `/media/${name}`, name: 'MAIN_IMG' });
    // The box fetched the bytes the menu names and serves them at the same relative path (docs/sync.md "Menu images").
    const served = await waitFor(
      'the box serving the image',
      async () => {
        const res = await rig.box!.get(`/media/${name}`);
        return res.status === 200 ? Buffer.from(await res.arrayBuffer()) : undefined;
      },
      30_000,
    );
    expect(served.equals(PNG)).toBe(true);
    expect(productIn((await boxMenu()).root, 'rosol').details.media[0].url).toBe(`/media/${name}`);
    await page.context().close();
  });

  test("two people editing one menu: the second save is refused with the central's message, the edit kept until reloaded", async () => {
    const first = await rig.open(`/catalogue?tab=menus&id=${MENU}`);
    const second = await rig.open(`/catalogue?tab=menus&id=${MENU}`);
    await openMenu(first, 'barszcz');
    await openMenu(second, 'barszcz');
    await first.getByTestId('literal-description').fill('Barszcz z uszkami, wersja pierwsza');
    await second.getByTestId('literal-description').fill('Barszcz z uszkami, wersja druga');
    await first.getByTestId('menu-save').click();
    await expect.poll(() => first.getByTestId('saved-rev').count(), { timeout: 10_000 }).toBe(1);
    const saved = await itemOf('menu', MENU);
    await second.getByTestId('menu-save').click();
    await expect.poll(() => second.getByTestId('conflict').count(), { timeout: 10_000 }).toBe(1);
    // The central's refusal, in the page's language: who changed the menu and at which rev; nothing of the second
    // edit written.
    const conflict = await second.getByTestId('conflict').textContent();
    expect(conflict).toContain(`wersja ${saved.rev}`);
    expect(conflict).toContain('centrala zmienił(a) ten wpis');
    expect(await itemOf('menu', MENU)).toEqual(saved);
    expect(productIn(saved.data.root, 'barszcz').details.literals.description).toBe(
      'Barszcz z uszkami, wersja pierwsza',
    );
    // The second person's text stays on screen until they choose to load the current version.
    expect(await second.getByTestId('literal-description').inputValue()).toBe('Barszcz z uszkami, wersja druga');
    await second.getByTestId('load-current').click();
    await second.getByTestId('node-barszcz').click();
    await expect
      .poll(() => second.getByTestId('literal-description').inputValue())
      .toBe('Barszcz z uszkami, wersja pierwsza');
    await first.context().close();
    await second.context().close();
  });

  /** The sub-views, each with what it shows opened (a product, a venue). */
  const VIEWS: { path: string; ready: (page: Page) => Promise<void> }[] = [
    { path: `/catalogue?tab=menus&id=${MENU}`, ready: (page) => openMenu(page, 'zurek') },
    { path: `/catalogue?tab=venues&id=${OPEN_VENUE}`, ready: (page) => openVenue(page, OPEN_VENUE) },
    { path: '/catalogue?tab=staff', ready: (page) => shown(page, 'staff-table') },
    { path: '/catalogue?tab=clients', ready: (page) => shown(page, 'client-table') },
    { path: '/catalogue?tab=warehouses', ready: (page) => shown(page, 'warehouse-table') },
    { path: `/catalogue?tab=soldout&id=${OPEN_VENUE}`, ready: (page) => shown(page, 'soldout-table') },
  ];
  async function shown(page: Page, testid: string): Promise<void> {
    await expect.poll(() => page.getByTestId(testid).count()).toBe(1);
    // The table's rows come with the catalogue.
    await expect.poll(() => page.getByTestId(testid).locator('tbody tr').count()).toBeGreaterThan(0);
  }

  test('a read-only headquarters user sees every sub-view with every change control disabled', async () => {
    const db = await openCentralDatabase({ dataDir: rig.central.dataDir, mode: 'client', poolSize: 1 });
    try {
      const tenant = { id: CENTRAL_DEMO.tenant, name: demo.tenants[0]!.name };
      const users = [{ ...READ_USER, scope: 'read' }];
      await provision(db.pool, 'read-only user', {
        tenants: [{ ...tenant, clients: [], users, venues: [], warehouses: [] }],
      });
    } finally {
      await db.close();
    }
    const page = await rig.open('/catalogue', READ_USER);
    for (const view of VIEWS) {
      await page.goto(rig.central.url(view.path));
      await view.ready(page);
      const controls = await page
        .locator('[data-change]')
        .evaluateAll((elements) => elements.map((e) => (e as unknown as { disabled: boolean }).disabled));
      expect(controls.length, view.path).toBeGreaterThan(0);
      expect(controls.every(Boolean), view.path).toBe(true);
      expect(await page.locator('.note').count(), view.path).toBeGreaterThan(0);
    }
    await page.context().close();
  });

  test('axe-core finds no serious or critical violation on any sub-view', async () => {
    // axe-core is injected as an inline script, which the central's Content-Security-Policy refuses: this page's
    // context bypasses the policy (the console's own scripts are files and need no such thing).
    const context = await rig.browser.newContext({ viewport: CONSOLE_VIEWPORT, bypassCSP: true });
    const page = await context.newPage();
    await page.goto(rig.central.url('/catalogue'));
    await signIn(page, CENTRAL_DEMO.hqUser.username, CENTRAL_DEMO.hqUser.password);
    for (const view of VIEWS) {
      await page.goto(rig.central.url(view.path));
      await view.ready(page);
      expect(await seriousViolations(page), view.path).toEqual([]);
    }
    // A refused save: the unsaved mark, the central's message and the tree's marks of where the errors are.
    await openMenu(page, 'kompot');
    await page.getByTestId('product-price').fill('siedem');
    await page.getByTestId('menu-save').click();
    await expect.poll(() => page.getByTestId('form-error').count(), { timeout: 10_000 }).toBe(1);
    expect(await seriousViolations(page), 'a refused menu').toEqual([]);
    await page.context().close();
  });
});
