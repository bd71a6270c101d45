import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ticketText } from './support/fake-printer.js';
import { markReady, type ScreensRig, startScreensRig, VENUE, WAIT } from './support/screens.js';
import { skipWithout } from './support/system-packages.js';

// What the screens say, in words staff and customers read (docs/screens.md "Money and time"; the hand-over: "How
// the screens behave"): prices with their currency, times in the venue's zone on a device set to another, printer
// roles and jobs in the screen's language, the kiosk's wrong-venue message in one language, the hand-over seen on
// the kiosk and at the pick-up counter, and the kitchen ticket's order type in words.
const skip = skipWithout(import.meta.url, 'chromium');

/** The venue's (Europe/Warsaw) wall clock of an instant, as a `datetime-local` input takes it. */
function warsawInput(ms: number): string {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone: 'Europe/Warsaw',
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
  }).formatToParts(new Date(ms));
  const get = (type: string) => parts.find((p) => p.type === type)!.value;
  return `${get('year')}-${get('month')}-${get('day')}T${get('hour')}:${get('minute')}`;
}

const warsawTime = (iso: string) =>
  new Intl.DateTimeFormat('pl-PL', {
    timeZone: 'Europe/Warsaw',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).format(new Date(iso));

describe.skipIf(skip)('the screens in Chromium: words, money and time', () => {
  let rig: ScreensRig;
  beforeAll(async () => {
    rig = await startScreensRig();
  }, 60_000);
  afterAll(async () => {
    await rig?.stop();
  });

  test("prices carry the venue's currency (PLN, screens.currency) in the screen's language", async () => {
    for (const [lang, pattern] of [
      ['pl', /^\d+,\d\d\s?zł$/],
      ['en', /^PLN\s?\d+\.\d\d$/],
    ] as const) {
      const page = await rig.open({ lang });
      await page.goto(rig.box.url(`/kiosk?venue=${VENUE}`));
      const zurek = page.locator('[data-testid=kiosk-product][data-product=zurek]');
      const price = (await zurek.locator('.price').textContent(WAIT))!.replace(/\u00a0|\u202f/g, ' ');
      expect(price, lang).toMatch(pattern);
      await zurek.click();
      await expect(page.locator('.basket-total').textContent(), lang).resolves.toMatch(lang === 'pl' ? /zł/ : /PLN/);
    }
  }, 60_000);

  test("times are the venue's (Europe/Warsaw) on a device in another zone: order list, print jobs, since filter", async () => {
    const placed = await rig.order(['rosol']);
    const staff = (await rig.staff()).access_token;
    const order = (await (await rig.box.get(`/ordering-api/api/order/${placed.orderId}`, staff)).json()) as {
      created: string;
    };
    const page = await rig.open({ lang: 'pl', timezoneId: 'America/Los_Angeles' });
    await rig.signIn(page, '/orders');
    const row = page.locator('[data-testid=order-list] tbody tr', { hasText: placed.claimCode });
    await expect(row.getByTestId('order-created').textContent(WAIT)).resolves.toContain(warsawTime(order.created));

    // "Since" is typed as the venue's wall clock: a minute before the order keeps it, two minutes after drops it.
    const since = page.locator('input[type=datetime-local]');
    await since.fill(warsawInput(Date.parse(order.created) - 60_000));
    await row.waitFor(WAIT);
    await since.fill(warsawInput(Date.parse(order.created) + 120_000));
    await row.waitFor({ state: 'detached', ...WAIT });

    await page.goto(rig.box.url('/manager'));
    await page.getByTestId('manager-printers').click(WAIT);
    await page.locator('[data-testid=printer][data-printer=kitchen]').getByTestId('printer-jobs').click(WAIT);
    // The jobs are read when the list opens: wait for the first, then take them all.
    await page.getByTestId('job-time').first().waitFor(WAIT);
    const times = await page.getByTestId('job-time').allTextContents();
    expect(times.length).toBeGreaterThan(0);
    // The kitchen ticket's job was made at the submit, within a minute of the order's creation.
    const near = [Date.parse(order.created), Date.parse(order.created) + 60_000].map((ms) =>
      warsawTime(new Date(ms).toISOString()),
    );
    expect(
      times.some((t) => near.some((n) => t.startsWith(n))),
      times.join(', '),
    ).toBe(true);
  }, 90_000);

  test('printer roles, job kinds and states are in Polish on a Polish screen', async () => {
    await rig.order(['kompot']);
    const page = await rig.open({ lang: 'pl' });
    await rig.signIn(page, '/manager');
    await page.getByTestId('manager-printers').click(WAIT);
    const kitchen = page.locator('[data-testid=printer][data-printer=kitchen]');
    await expect(kitchen.getByTestId('printer-role').textContent(WAIT)).resolves.toBe('kuchnia');
    await expect(
      page.locator('[data-testid=printer][data-printer=counter]').getByTestId('printer-role').textContent(),
    ).resolves.toBe('lada');
    await kitchen.getByTestId('printer-jobs').click();
    const job = page.getByTestId('job').first();
    await expect(job.textContent(WAIT)).resolves.toMatch(/^kuchnia/);
    await expect(job.textContent()).resolves.not.toMatch(/kitchen|queued|printed/);
  }, 60_000);

  test("the kiosk at an unknown venue says so in the screen's language, without the raw id", async () => {
    const unknown = '00000000-0000-4000-8000-000000000000';
    for (const [lang, text, retry] of [
      ['pl', 'Ten kiosk wskazuje lokal, którego nie ma. Poproś obsługę o pomoc.', 'Spróbuj ponownie'],
      ['en', 'This kiosk names a venue that does not exist. Please ask the staff for help.', 'Try again'],
    ] as const) {
      const page = await rig.open({ lang });
      await page.goto(rig.box.url(`/kiosk?venue=${unknown}`));
      const error = page.getByTestId('load-error');
      await expect(error.locator('p').textContent(WAIT), lang).resolves.toBe(text);
      await expect(error.locator('button').textContent(), lang).resolves.toBe(retry);
      await expect(error.textContent()).resolves.not.toContain(unknown);
    }
  }, 60_000);

  test('after the hand-over the kiosk no longer says "ready", and pick-up confirms it', async () => {
    const kiosk = await rig.open({ lang: 'en' });
    await kiosk.goto(rig.box.url(`/kiosk?venue=${VENUE}`));
    await kiosk.locator('[data-testid=kiosk-product][data-product=zurek]').click(WAIT);
    await kiosk.getByTestId('place-order').click(WAIT);
    const code = (await kiosk.getByTestId('claim-code').textContent(WAIT))!.trim();
    const orderId = await rig.box
      .get(`/ordering-api/api/orders?venue=${VENUE}&status=ORDERED`, (await rig.staff()).access_token)
      .then((r) => r.json() as Promise<{ items: { id: string; claimCode: string }[] }>)
      .then((page) => page.items.find((o) => o.claimCode === code)!.id);
    await markReady(rig, { orderId, token: (await rig.staff()).access_token });
    await kiosk.locator('[data-testid=claim][data-status=READY]').waitFor(WAIT);
    await expect(kiosk.getByTestId('claim-status').textContent()).resolves.toBe('Ready! Collect it at the counter');

    const counter = await rig.open({ lang: 'pl' });
    await rig.signIn(counter, '/pickup');
    await counter.getByTestId('claim-input').fill(code);
    await counter.getByTestId('find').click();
    await counter.locator('[data-testid=found-order][data-status=READY]').waitFor(WAIT);
    await counter.getByTestId('complete').click();
    const confirmation = counter.locator(`[data-testid=handed-over][data-claim="${code}"]`);
    await expect(confirmation.textContent(WAIT)).resolves.toContain(`Wydano zamówienie ${code}`);
    await expect(confirmation.getAttribute('role')).resolves.toBe('status');

    await kiosk.locator('[data-testid=claim][data-status=COMPLETED]').waitFor(WAIT);
    const said = await kiosk.getByTestId('claim-status').textContent();
    expect(said).toBe('Handed over. Enjoy your meal!');
    expect(said).not.toMatch(/ready/i);
  }, 90_000);

  test("the kitchen ticket names the order type in words, not the API's TAKE_AWAY", async () => {
    const { claimCode } = await rig.order(['placki']);
    const ticket = ticketText(await rig.printers[0]!.waitForTicketWith(claimCode, 20_000));
    expect(ticket).toContain('NA WYNOS / TAKE-AWAY');
    expect(ticket).not.toContain('TAKE_AWAY');
  }, 60_000);
});
