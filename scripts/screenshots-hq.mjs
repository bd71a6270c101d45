// Screenshots of the headquarters console (README "Headquarters console") at laptop size (1440x900) into
// docs/screens/hq-*.png. Starts the built central (dist/main.cjs; run `npm run build` first) on the demo with a temp
// data dir, fills it with a week of the demo chain (scripts/lib/demo-chain.mjs: simulated boxes speaking the real
// sync protocol), signs in as `centrala` and drives Debian's Chromium through every page.
//   node scripts/screenshots-hq.mjs [--out docs/screens]
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
// Plain erasable TypeScript, loaded by Node 24's type stripping.
import { CHROMIUM_ARGS } from '../test/support/system-packages.ts';
import { fillDemoChain } from './lib/demo-chain.mjs';
import { benchRun, root } from './lib/run.mjs';

const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const { values } = parseArgs({ options: { out: { type: 'string', default: 'docs/screens' } } });
const out = resolve(values.out);
const demo = JSON.parse(readFileSync(join(root, 'native-config/demo.json'), 'utf8')).tenants[0];

if (!existsSync(CHROMIUM)) {
  console.error(`screenshots: ${CHROMIUM} is absent (apt-get install chromium, or set CHROMIUM)`);
  process.exit(1);
}
if (!existsSync(join(root, 'dist/main.cjs')) || !existsSync(join(root, 'dist/hq/index.html'))) {
  console.error('screenshots: run `npm run build` first (dist/main.cjs and dist/hq)');
  process.exit(1);
}

const { started, tmp } = benchRun();
const dataDir = join(tmp('vb-hq-screens-'), 'central');
const central = spawn(
  process.execPath,
  ['dist/main.cjs', 'central', 'serve', '--demo', '--host', '127.0.0.1', '--port', '0', '--data-dir', dataDir],
  { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] },
);
started.push(central);
const port = await new Promise((resolveStart, reject) => {
  central.once('exit', (code) => reject(new Error(`the central exited with ${code}`)));
  createInterface({ input: central.stdout }).on('line', (line) => {
    if (line.includes('"central listening"')) resolveStart(JSON.parse(line).port);
  });
});
const base = `http://127.0.0.1:${port}`;
await fillDemoChain({ central: base, dataDir, days: 7, log: () => undefined });

mkdirSync(out, { recursive: true });
const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
try {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  page.on('pageerror', (err) => console.error(`page error: ${err.message}`));
  const shot = async (name) => {
    // Charts draw after their data arrives; the console has no spinner left when it is done.
    await page.waitForLoadState('networkidle');
    await page.waitForTimeout(400);
    await page.screenshot({ path: join(out, `hq-${name}.png`) });
    console.log(relative(process.cwd(), join(out, `hq-${name}.png`)));
  };
  await page.goto(`${base}/`);
  await page.getByTestId('signin').waitFor();
  await shot('signin');
  await page.locator('input[name=username]').fill('centrala');
  await page.locator('input[name=password]').fill('centrala-demo-1');
  await page.locator('button[type=submit]').click();
  await page.getByTestId('user').waitFor();

  const visit = async (path, name) => {
    await page.goto(`${base}${path}`);
    await page.getByTestId('user').waitFor();
    await shot(name);
  };
  const venue = demo.venues[0];
  await visit('/dashboard', 'dashboard');
  await visit('/catalogue?tab=menus', 'catalogue-menu');
  await visit(`/catalogue?tab=venues&id=${venue.id}`, 'catalogue-venue');
  await visit('/catalogue?tab=staff', 'catalogue-staff');
  await visit('/fleet', 'fleet');
  await visit('/orders', 'orders');
  const token = await (
    await fetch(`${base}/auth-oauth2/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-tenant': demo.id },
      body: 'grant_type=password&username=centrala&password=centrala-demo-1&client_id=hq-console',
    })
  ).json();
  const orders = await (
    await fetch(`${base}/hq-api/api/orders?status=COMPLETED&limit=1`, {
      headers: { authorization: `Bearer ${token.access_token}` },
    })
  ).json();
  if (orders.items[0]) await visit(`/orders?id=${orders.items[0].id}`, 'order');
  await visit('/orders?tab=new', 'call-centre');
  await visit(`/stock?warehouse=${venue.warehouse}`, 'stock');
  await visit(`/stock?tab=send&venue=${venue.id}`, 'stock-send');
  await visit('/reports', 'reports');
} finally {
  await browser.close();
  // The central stops its PostgreSQL before the temp directory goes (benchRun removes it at exit).
  const stopped = new Promise((resolve) => central.once('exit', resolve));
  central.kill('SIGTERM');
  await stopped;
}
process.exit(0);
