import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DEMO } from './support/box.js';
import { CENTRAL_DEMO, centralTokenRequest } from './support/central.js';
import { type ConsoleRig, startConsoleRig } from './support/hq-console.js';
import { skipWithout } from './support/system-packages.js';
import { waitFor } from './support/sync.js';

/**
 * The console's orders and stock pages (docs/console.md "Pages") against a real central and a real enrolled box of
 * the demo tenant's open venue: what the console sends must reach the box (its own API says so), and what the box
 * reports must show in the console.
 */
const skip = skipWithout(import.meta.url, 'chromium');
const VENUE = DEMO.openVenue;
const [VENUE_WAREHOUSE, OTHER_WAREHOUSE] = CENTRAL_DEMO.warehouses as [string, string];

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

let rig: ConsoleRig;
let hqToken: string;

beforeAll(async () => {
  if (skip) return;
  rig = await startConsoleRig({ box: true });
  hqToken = await rig.central.hqToken();
  await rig.boxCaughtUp();
}, 90_000);
afterAll(async () => {
  await rig?.stop();
});

async function hqCall(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(rig.central.url(`/hq-api/api${path}`), {
    method,
    headers: { authorization: `Bearer ${hqToken}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

const inboxIds = async (): Promise<string[]> =>
  ((await hqCall('GET', '/inbox?limit=200')).body.items as { id: string }[]).map((e) => e.id);

async function staffToken(): Promise<{ token: string; user: string }> {
  const t = await rig.box!.token(DEMO.staff.username, DEMO.staff.password);
  return { token: t.access_token, user: t.UUID };
}

/** The order as the box itself answers it (its staff API), or undefined while it has none. */
async function boxOrder(id: string): Promise<any> {
  const { token } = await staffToken();
  const res = await rig.box!.get(`/ordering-api/api/order/${id}`, token);
  return res.status === 200 ? res.json() : undefined;
}

/** The box's own stock of one item in its warehouse (its warehouse API). */
async function boxStock(item: string): Promise<number> {
  const { token, user } = await staffToken();
  const res = await rig.box!.post(
    `/warehouse-api/api/warehouse/${VENUE_WAREHOUSE}/stock`,
    token,
    { items: [item] },
    { 'x-tenant': DEMO.tenant, 'x-user': user },
  );
  expect(res.status).toBe(200);
  return ((await res.json()) as { items: { qty: number }[] }).items[0]!.qty;
}

/**
 * axe-core's serious and critical violations must be none. The script goes in through the DevTools protocol:
 * page.evaluate is not bound by the page's Content-Security-Policy (script-src 'self'), which refuses the inline
 * <script> that test/support/hq-console.ts's seriousViolations adds.
 */
async function expectAccessible(page: Page): Promise<void> {
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    type Found = { id: string; impact: string | null; nodes: { target: string[] }[] };
    const axe = (globalThis as unknown as { axe: { run(): Promise<{ violations: Found[] }> } }).axe;
    return (await axe.run()).violations;
  });
  const serious = violations
    .filter((v) => v.impact === 'critical' || v.impact === 'serious')
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(' | ')}`);
  expect(serious).toEqual([]);
}

/** An order placed on the call-centre form; its id (the entry's) once the console shows it sent. */
async function placeOrder(page: Page, contact: { name: string; phone: string }): Promise<string> {
  const form = page.getByTestId('callcentre-form');
  await form.getByTestId('venue-picker').selectOption(VENUE);
  await page.getByTestId('menu-zurek').click();
  await page.getByTestId('menu-zurek').click();
  await page.getByTestId('menu-rosol').click();
  await page.getByTestId('contact-name').fill(contact.name);
  await page.getByTestId('contact-phone').fill(contact.phone);
  await expect.poll(() => page.getByTestId('basket-total').textContent()).toMatch(/50,50/);
  const before = new Set(await inboxIds());
  await page.getByTestId('callcentre-submit').click();
  await page.getByTestId('sent-order').waitFor();
  const created = await waitFor('the entry at the central', async () =>
    (await inboxIds()).find((id) => !before.has(id)),
  );
  return created;
}

describe.skipIf(skip)('orders page', () => {
  test('a call-centre order is ORDERED on the box, shown applied, and its timeline shows its versions', async () => {
    const page = await rig.open('/orders?tab=new');
    await page.getByTestId('menu-zurek').waitFor();
    await expectAccessible(page);
    const id = await placeOrder(page, { name: 'Anna Testowa', phone: '+48 600 111 222' });

    // The box's own API: the order exists there, sent to the kitchen, as the call centre took it.
    const onBox = await waitFor('the order on the box', () => boxOrder(id), 30_000);
    expect(onBox).toMatchObject({ id, status: 'ORDERED', source: 'central', orderType: 'TAKE_AWAY', total: '50.50' });
    expect(
      onBox.buckets[0].lines.map((l: { productId: string; quantity: number }) => [l.productId, l.quantity]),
    ).toEqual([
      ['zurek', 2],
      ['rosol', 1],
    ]);

    // The console follows the entry: applied by the box, then a link once the box's copy reached the central.
    await expect
      .poll(() => page.getByTestId('sent-order').getByTestId('entry-status').getAttribute('data-status'), {
        timeout: 30_000,
      })
      .toBe('applied');
    await page.getByTestId('sent-order-link').click({ timeout: 30_000 });

    const view = page.getByTestId('order-view');
    await view.waitFor();
    await expect.poll(() => view.getByTestId('order-total').textContent()).toMatch(/50,50/);
    await expect.poll(() => view.getByTestId('order-contact').textContent()).toContain('Anna Testowa');
    const versions = view.getByTestId('order-version');
    await expect.poll(() => versions.count()).toBeGreaterThanOrEqual(2);
    const texts = await versions.allInnerTexts();
    expect(texts[0]).toMatch(/Wersja 1: utworzenie/);
    expect(texts.some((v) => /wysłanie do kuchni/.test(v) && /Zamówione/.test(v))).toBe(true);
    expect(texts[0]).toMatch(/obsługa/);
    expect(await view.getByTestId('order-lines').locator('tbody tr').count()).toBe(2);
    await expectAccessible(page);
  }, 90_000);

  test('an order the box refuses shows rejected with its codes; a sold-out product is greyed', async () => {
    const page = await rig.open('/orders?tab=new');
    await page.getByTestId('callcentre-form').getByTestId('venue-picker').selectOption(VENUE);
    await page.getByTestId('menu-szarlotka').click();
    await page.getByTestId('contact-name').fill('Odmowa Testowa');
    // Sold out at the venue while the call centre takes the order (the form's catalogue is older): the box decides.
    expect((await hqCall('PUT', `/sold-out/${VENUE}/szarlotka`, { reason: 'test' })).status).toBe(200);
    try {
      await rig.boxCaughtUp();
      await page.getByTestId('callcentre-submit').click();
      const sent = page.getByTestId('sent-order');
      await expect
        .poll(() => sent.getByTestId('entry-status').getAttribute('data-status'), { timeout: 30_000 })
        .toBe('rejected');
      const codes = await sent.getByTestId('sent-codes').textContent();
      const entry = (await hqCall('GET', '/inbox?limit=200')).body.items.find(
        (e: { body: { contact?: { name?: string } } }) => e.body.contact?.name === 'Odmowa Testowa',
      );
      expect(entry.status).toBe('rejected');
      expect(entry.codes.length).toBeGreaterThan(0);
      for (const c of entry.codes) expect(codes).toContain(c.code);
      expect(await boxOrder(entry.id)).toBeUndefined();
      await expectAccessible(page);

      // A fresh page reads the catalogue again: the product is greyed and cannot be added.
      await page.reload();
      await page.getByTestId('callcentre-form').getByTestId('venue-picker').selectOption(VENUE);
      await expect.poll(() => page.getByTestId('menu-szarlotka').isDisabled()).toBe(true);
      await expectAccessible(page);
    } finally {
      await hqCall('DELETE', `/sold-out/${VENUE}/szarlotka`);
    }
  }, 90_000);

  test('orders are found by text in the contact and by status once they synced up', async () => {
    const mine = randomUUID();
    const other = randomUUID();
    const order = (id: string, name: string) => ({
      id,
      orderType: 'TAKE_AWAY',
      contact: { name, phone: '+48 600 000 000' },
      buckets: [{ venue: VENUE, lines: [{ productId: 'kompot', quantity: 1 }] }],
    });
    expect((await hqCall('POST', '/orders', order(mine, 'Jadwiga Szukana'))).status).toBe(202);
    expect((await hqCall('POST', '/orders', order(other, 'Zenon Inny'))).status).toBe(202);
    for (const id of [mine, other])
      await waitFor(`order ${id} at the central`, async () => (await hqCall('GET', `/orders/${id}`)).status === 200);

    const page = await rig.open('/orders');
    const table = page.getByTestId('orders-table');
    const ids = async () => (await table.getByTestId('order-link').allInnerTexts()).map((s) => s.trim());
    await expect.poll(ids).toContain(mine.slice(0, 8));
    await expectAccessible(page);

    await page.getByTestId('filter-status').selectOption('CANCELLED');
    await page.getByTestId('orders-search').click();
    await expect.poll(ids).not.toContain(mine.slice(0, 8));
    await page.getByTestId('filter-status').selectOption('ORDERED');
    await page.getByTestId('orders-search').click();
    await expect.poll(ids).toContain(mine.slice(0, 8));

    // An order opened from the results, then "back": the same search (the address holds the filters).
    await table
      .getByTestId('order-link')
      .filter({ hasText: mine.slice(0, 8) })
      .click();
    await page.getByTestId('order-view').waitFor();
    await page.goBack();
    await expect.poll(() => page.getByTestId('filter-status').inputValue()).toBe('ORDERED');
    await expect.poll(ids).toContain(mine.slice(0, 8));

    // Text in the contact (the central's `q`): only the order whose contact has it.
    await page.getByTestId('filter-status').selectOption('');
    await page.getByTestId('filter-q').fill('szukana');
    await page.getByTestId('orders-search').click();
    await expect.poll(ids).toEqual([mine.slice(0, 8)]);

    // A filter the central refuses is shown by its field (a text of one letter).
    await page.getByTestId('filter-q').fill('x');
    await page.getByTestId('orders-search').click();
    await expect
      .poll(() => page.locator('input[name=q]').getAttribute('aria-invalid'), { timeout: 10_000 })
      .toBe('true');
  }, 90_000);

  test('bad input on the call-centre form shows the refusal by its field and sends nothing', async () => {
    const page = await rig.open('/orders?tab=new');
    await page.getByTestId('menu-zurek').waitFor();
    const before = (await inboxIds()).length;

    // An empty basket is not sent.
    await page.getByTestId('contact-name').fill('Pusty Koszyk');
    await page.getByTestId('callcentre-submit').click();
    await expect
      .poll(() => page.getByTestId('field-error').allInnerTexts())
      .toContain('Koszyk jest pusty: dodaj produkty z menu');

    // A quantity the central refuses (1..999): its message by that line's input, nothing created.
    await page.getByTestId('menu-zurek').click();
    await page.getByTestId('qty-zurek').fill('1000');
    await page.getByTestId('callcentre-submit').click();
    await expect.poll(() => page.getByTestId('qty-zurek').getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByTestId('form-error').count()).toBe(1);
    const describedBy = await page.getByTestId('qty-zurek').getAttribute('aria-describedby');
    expect(await page.locator(`[id="${describedBy}"]`).textContent()).toMatch(/999/);

    // A contact longer than the central takes: by its field.
    await page.getByTestId('qty-zurek').fill('1');
    await page.getByTestId('contact-email').fill(`${'a'.repeat(200)}@example.com`);
    await page.getByTestId('callcentre-submit').click();
    await expect.poll(() => page.getByTestId('contact-email').getAttribute('aria-invalid')).toBe('true');

    expect((await inboxIds()).length).toBe(before);
    await expectAccessible(page);
  }, 60_000);
});

describe.skipIf(skip)('stock page', () => {
  test('an MM and a count sheet sent to the venue are applied by the box; the console shows state, stock, ledger', async () => {
    const page = await rig.open(`/stock?tab=send&venue=${VENUE}`);
    const form = page.getByTestId('send-document');
    await form.getByTestId('item-id-0').waitFor();
    await expectAccessible(page);
    const start = await boxStock('mleko');

    // A quantity the box's rules refuse: by its field, nothing sent.
    const before = (await inboxIds()).length;
    await form.getByTestId('document-kind').selectOption('MM');
    await form.getByTestId('document-source').selectOption(OTHER_WAREHOUSE);
    await form.getByTestId('item-id-0').fill('mleko');
    await form.getByTestId('item-unit-0').fill('l');
    await form.getByTestId('item-qty-0').fill('0');
    await form.getByTestId('send-document-submit').click();
    await expect.poll(() => form.getByTestId('item-qty-0').getAttribute('aria-invalid')).toBe('true');
    expect((await inboxIds()).length).toBe(before);

    // The MM: the box books the receipt into its warehouse.
    await form.getByTestId('item-qty-0').fill('24');
    await form.getByTestId('send-document-submit').click();
    const sent = page.getByTestId('sent-document').getByTestId('entry-status');
    await expect.poll(() => sent.getAttribute('data-status'), { timeout: 30_000 }).toBe('applied');
    expect(await boxStock('mleko')).toBe(start + 24);

    // A count sheet of the venue's warehouse: the box sets the counted quantity.
    await form.getByTestId('document-kind').selectOption('Inventory');
    await form.getByTestId('item-id-0').fill('mleko');
    await form.getByTestId('item-unit-0').fill('l');
    await form.getByTestId('item-qty-0').fill('20');
    await form.getByTestId('send-document-submit').click();
    await expect.poll(() => page.getByTestId('sent-documents').getByTestId('entry-status').count()).toBe(2);
    await expect.poll(() => sent.getAttribute('data-status'), { timeout: 30_000 }).toBe('applied');
    await expect.poll(() => boxStock('mleko')).toBe(20);
    await expectAccessible(page);

    // The venue's warehouse at the central once the box's documents came up: the balance and the count sheet.
    await waitFor('the count sheet at the central', async () => {
      const docs = (await hqCall('GET', `/stock-documents?warehouseId=${VENUE_WAREHOUSE}`)).body.items;
      return docs.some((d: { kind: string }) => d.kind === 'Inventory');
    });
    await page.goto(rig.central.url(`/stock?warehouse=${VENUE_WAREHOUSE}`));
    const balances = page.getByTestId('stock-balances');
    const qty = balances.locator('tbody tr', { hasText: 'mleko' }).locator('td').nth(2);
    await expect.poll(() => qty.textContent()).toBe('20');
    await expectAccessible(page);
    await page
      .getByTestId('stock-documents')
      .locator('tbody tr', { hasText: 'Arkusz spisu' })
      .first()
      .getByTestId('document-link')
      .click();
    // The ledger row the count booked: counted 20 where the box held start + 24.
    const delta = new Intl.NumberFormat('pl-PL', { maximumFractionDigits: 6 }).format(20 - (start + 24));
    const row = page.getByTestId('document-ledger').locator('tbody tr', { hasText: 'mleko' });
    await expect.poll(() => row.textContent()).toContain(delta);
    await expectAccessible(page);
  }, 120_000);
});

describe.skipIf(skip)('a read-only user', () => {
  test('sees the note and cannot use the call centre or send a document', async () => {
    const res = await centralTokenRequest(rig.central, {
      grant_type: 'password',
      ...CENTRAL_DEMO.hqUser,
      scope: 'read',
    });
    expect(res.status).toBe(200);
    const t = (await res.json()) as {
      access_token: string;
      refresh_token: string;
      expires_in: number;
      UUID: string;
      scope: string;
    };
    expect(t.scope).toBe('read');
    // The console's stored session (web/api.ts Session, key vb.hq.session), as a sign-in with this token leaves it.
    const session = {
      accessToken: t.access_token,
      refreshToken: t.refresh_token,
      expiresAt: Date.now() + t.expires_in * 1000,
      userId: t.UUID,
      scope: t.scope,
      username: CENTRAL_DEMO.hqUser.username,
    };
    const context = await rig.browser.newContext({ viewport: { width: 1024, height: 768 } });
    await context.addInitScript((value) => localStorage.setItem('vb.hq.session', value), JSON.stringify(session));
    const page = await context.newPage();
    try {
      await page.goto(rig.central.url('/orders?tab=new'));
      await page.getByTestId('menu-zurek').waitFor();
      await expect.poll(() => page.getByText('Tylko podgląd').count()).toBe(1);
      expect(await page.getByTestId('callcentre-submit').isDisabled()).toBe(true);
      expect(await page.getByTestId('menu-zurek').isDisabled()).toBe(true);
      await expectAccessible(page);

      await page.goto(rig.central.url(`/stock?tab=send&venue=${VENUE}`));
      await page.getByTestId('send-document-submit').waitFor();
      expect(await page.getByTestId('send-document-submit').isDisabled()).toBe(true);
      expect(await page.getByTestId('item-id-0').isDisabled()).toBe(true);
      await expect.poll(() => page.getByText('Tylko podgląd').count()).toBe(1);
    } finally {
      await context.close();
    }
  }, 60_000);
});
