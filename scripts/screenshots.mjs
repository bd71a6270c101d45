// Screenshots of the box's screens (README "Screens") at tablet size (1280x800), and the kiosk on a phone, into
// docs/screens/*.png. Starts the built box (dist/main.cjs; run `npm run build` first) on the demo with a temp data
// dir, fills it through the public API (orders, a tab, a sold-out product, a PZ), then drives Debian's Chromium.
//   node scripts/screenshots.mjs [--out docs/screens]
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
// Plain erasable TypeScript, loaded by Node 24's type stripping.
import { CHROMIUM_ARGS } from '../test/support/system-packages.ts';

const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const { values } = parseArgs({ options: { out: { type: 'string', default: 'docs/screens' } } });
const out = resolve(values.out);
const demo = JSON.parse(readFileSync('native-config/demo.json', 'utf8')).tenants[0];
const VENUE = demo.venues[0].id;
const WAREHOUSE = demo.venues[0].warehouse;
const basic = `Basic ${Buffer.from(`${demo.clients[0].clientId}:${demo.clients[0].clientSecret}`).toString('base64')}`;

if (!existsSync(CHROMIUM)) {
  console.error(`screenshots: ${CHROMIUM} is absent (apt-get install chromium, or set CHROMIUM)`);
  process.exit(1);
}
if (!existsSync('dist/main.cjs') || !existsSync('dist/web/index.html')) {
  console.error('screenshots: run `npm run build` first (dist/main.cjs and dist/web)');
  process.exit(1);
}

const dir = mkdtempSync(join(tmpdir(), 'vb-screenshots-'));
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const config = join(dir, 'config.json');
// A kitchen printer on a path with no device: the manager screen shows it offline, with its last error.
writeFileSync(
  config,
  JSON.stringify({
    printers: [
      {
        name: 'kuchnia-goraca',
        venue: VENUE,
        role: 'kitchen',
        path: join(dir, 'no-such-printer'),
        categories: ['soups', 'mains'],
      },
    ],
  }),
);
const box = spawn(
  process.execPath,
  [
    'dist/main.cjs',
    'serve',
    '--demo',
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
    '--data-dir',
    join(dir, 'data'),
    '--config',
    config,
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
let browser;
try {
  await new Promise((resolveStart, reject) => {
    box.once('exit', (code) => reject(new Error(`the box exited with ${code}`)));
    createInterface({ input: box.stdout }).on('line', (line) => {
      if (line.includes('"venue-box listening"')) resolveStart();
    });
  });
  await fillTheBox();
  mkdirSync(out, { recursive: true });
  browser = await chromium.launchPersistentContext(join(dir, 'chromium'), {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 800 },
    locale: 'pl-PL',
    args: CHROMIUM_ARGS,
  });
  const page = await browser.newPage();
  const shot = async (name, p = page) => {
    await p.waitForTimeout(400); // fonts and the last socket frame painted
    await p.screenshot({ path: join(out, `${name}.png`), animations: 'disabled' });
    console.log(`  ${join(values.out, `${name}.png`)}`);
  };

  await page.goto(`${base}/`);
  await page.getByTestId('signin').waitFor();
  await page.locator('input[name=username]').fill('kuchnia');
  await shot('signin');
  await page.locator('input[name=password]').fill('kuchnia-demo-1');
  await page.locator('button[type=submit]').click();
  await page.getByTestId('sign-out').waitFor();

  await page.goto(`${base}/kitchen`);
  await page.getByTestId('kitchen-card').first().waitFor();
  await shot('kitchen');

  await page.goto(`${base}/pickup`);
  const ready = page.locator('.chip.ready').first();
  await ready.waitFor();
  await ready.click();
  await page.getByTestId('found-order').waitFor();
  await shot('pickup');

  await page.goto(`${base}/tabs`);
  await page.getByTestId('tab').first().click();
  await page.getByTestId('tab-detail').waitFor();
  await page.getByTestId('add-product').first().waitFor();
  await shot('tabs');

  await page.goto(`${base}/orders`);
  await page.locator('[data-testid=order-list] tbody tr').first().waitFor();
  await shot('orders');

  await page.goto(`${base}/manager`);
  await page.getByTestId('manager-products').click();
  await page.getByTestId('product-row').first().waitFor();
  await shot('manager-products');
  await page.getByTestId('manager-printers').click();
  await page.getByTestId('printer').first().waitFor();
  await page
    .locator('[data-testid=printer-status]', { hasText: 'Offline' })
    .waitFor({ timeout: 20_000 })
    .catch(() => undefined);
  await shot('manager-printers');
  // The items this device follows (the API answers for named items only): what the PZ above brought.
  await page.evaluate(
    ([key, items]) => localStorage.setItem(key, JSON.stringify(items)),
    [`vb.items.${WAREHOUSE}`, ['mleko', 'bulka', 'buraki']],
  );
  await page.getByTestId('manager-products').click();
  await page.getByTestId('manager-stock').click();
  await page.locator('[data-testid=stock] tbody tr').first().waitFor();
  await shot('manager-stock');

  const kiosk = await browser.newPage();
  await kiosk.goto(`${base}/kiosk?venue=${VENUE}`);
  await kiosk.locator('[data-testid=kiosk-product][data-product=zurek]').click();
  await kiosk.locator('[data-testid=kiosk-product][data-product=zurek]').click();
  await kiosk.locator('[data-testid=kiosk-product][data-product=szarlotka]').click();
  await shot('kiosk', kiosk);
  await kiosk.getByTestId('place-order').click();
  await kiosk.getByTestId('claim-code').waitFor();
  await shot('kiosk-claim', kiosk);

  const phone = await browser.newPage();
  await phone.setViewportSize({ width: 390, height: 844 });
  await phone.goto(`${base}/kiosk?venue=${VENUE}`);
  await phone.locator('[data-testid=kiosk-product]').first().waitFor();
  await shot('kiosk-phone', phone);
} finally {
  await browser?.close();
  if (box.exitCode === null) {
    const exited = new Promise((r) => box.once('exit', r));
    box.kill('SIGTERM');
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
}

async function freePort() {
  const server = createServer();
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const { port: free } = server.address();
  await new Promise((r) => server.close(r));
  return free;
}

async function token(username, password) {
  const res = await fetch(`${base}/auth-oauth2/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-tenant': demo.id, authorization: basic },
    body: new URLSearchParams({ grant_type: 'password', username, password }).toString(),
  });
  if (!res.ok) throw new Error(`token ${username}: ${res.status} ${await res.text()}`);
  return res.json();
}

async function call(tok, method, path, body, headers = {}) {
  const res = await fetch(`${base}${path}`, {
    method,
    body: body === undefined ? undefined : JSON.stringify(body),
    headers: { authorization: `Bearer ${tok}`, 'content-type': 'application/json', ...headers },
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

/** A lunch hour's worth of state, through the public API. */
async function fillTheBox() {
  const staff = await token('kelner', 'kelner-demo-1');
  const line = (productId, quantity = 1, note) => ({ productId, quantity, ...(note ? { extra: { note } } : {}) });
  const orders = [
    [line('zurek', 2), line('kompot', 2)],
    [line('pierogi-ruskie', 1, 'bez cebulki'), line('woda')],
    [line('schabowy'), line('barszcz', 1, 'na wynos, osobno')],
    [line('placki', 2), line('sernik')],
  ];
  const ids = [];
  for (const lines of orders) {
    const customer = (await token('anonymous', '')).access_token;
    const { orderId } = await call(customer, 'POST', '/ordering-api/api/order/new', {
      orderType: 'TAKE_AWAY',
      buckets: [{ venue: VENUE, lines }],
    });
    await call(customer, 'POST', `/ordering-api/api/order/${orderId}/submit`, {});
    ids.push(orderId);
  }
  await new Promise((r) => setTimeout(r, 300));
  await call(staff.access_token, 'POST', `/ordering-api/api/order/${ids[0]}/ready`, {});
  // A table's tab: two rounds sent, a third being taken.
  const { orderId: tab } = await call(staff.access_token, 'POST', '/ordering-api/api/order/new', {
    orderType: 'DINE_IN_OPEN',
    buckets: [{ venue: VENUE, lines: [line('piwo', 2), line('rosol', 2)] }],
  });
  await call(staff.access_token, 'POST', `/ordering-api/api/order/${tab}/submit`, {});
  await new Promise((r) => setTimeout(r, 50));
  await call(staff.access_token, 'POST', `/ordering-api/api/order/${tab}/append`, {
    venue: VENUE,
    lines: [line('ges', 1, 'dobrze wypieczona'), line('pierogi-miesne')],
  });
  await call(staff.access_token, 'POST', `/ordering-api/api/order/${tab}/submit`, {});
  await new Promise((r) => setTimeout(r, 50));
  await call(staff.access_token, 'POST', `/ordering-api/api/order/${tab}/append`, {
    venue: VENUE,
    lines: [line('szarlotka', 2)],
  });
  await call(staff.access_token, 'PUT', `/menu-api/api/menu/${demo.menus[0].id}/locks`, {
    venue: VENUE,
    productId: 'kompot',
    locked: true,
    reason: 'brak owoców',
  });
  const wh = { 'x-tenant': demo.id, 'x-user': staff.UUID };
  await call(
    staff.access_token,
    'POST',
    `/warehouse-api/api/warehouse/${WAREHOUSE}/documents/pz`,
    {
      number: 'FV/2026/0412',
      items: [
        { id: 'mleko', unit: 'l', qty: 12.5, unitPrice: 3.2 },
        { id: 'bulka', unit: 'szt', qty: 40 },
        { id: 'buraki', unit: 'kg', qty: 8 },
      ],
    },
    wh,
  );
}
