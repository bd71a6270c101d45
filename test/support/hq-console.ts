import { type Browser, chromium, type Page } from 'playwright-core';
import { DEMO, startTestBox, type TestBox } from './box.js';
import { CENTRAL_DEMO, startTestCentral, type TestCentral } from './central.js';
import { enrol, FAST_SYNC, syncStatus, waitFor } from './sync.js';
import { CHROMIUM_ARGS, SYSTEM_PACKAGES } from './system-packages.js';

/**
 * The headquarters console's browser tests (docs/console.md): a real central (embedded PostgreSQL) serving the
 * console, optionally a real box of the demo tenant enrolled at it, and Debian's Chromium driven by playwright-core
 * at the size the console is made for (1440x900).
 */
export interface ConsoleRig {
  central: TestCentral;
  /** The enrolled box (when asked for). */
  box?: TestBox;
  browser: Browser;
  /** A new page of a new context (its own localStorage), signed in as `user` and showing `path`. */
  open(path?: string, user?: { username: string; password: string }): Promise<Page>;
  /** The box's applied catalogue rev is at least the central's current one. */
  boxCaughtUp(): Promise<void>;
  stop(): Promise<void>;
}

export const CONSOLE_VIEWPORT = { width: 1440, height: 900 };
const BOX_CONFIG = { sync: { ...FAST_SYNC.sync, catalogueWaitSeconds: 20 } };

export async function startConsoleRig(o: { box?: boolean } = {}): Promise<ConsoleRig> {
  const central = await startTestCentral();
  let box: TestBox | undefined;
  let browser: Browser | undefined;
  try {
    if (o.box) {
      box = await startTestBox({ config: BOX_CONFIG });
      await enrol(box, central.url(''), await central.enrolCode(DEMO.openVenue));
    }
    browser = await chromium.launch({ executablePath: SYSTEM_PACKAGES.chromium, headless: true, args: CHROMIUM_ARGS });
  } catch (err) {
    await box?.stop();
    await central.stop();
    throw err;
  }
  const rig: ConsoleRig = {
    central,
    box,
    browser,
    async open(path = '/', user = CENTRAL_DEMO.hqUser) {
      // bypassCSP: axe-core is injected as an inline script, which the console's CSP (script-src 'self') refuses.
      const context = await browser!.newContext({ viewport: CONSOLE_VIEWPORT, bypassCSP: true });
      const page = await context.newPage();
      await page.goto(central.url(path));
      await signIn(page, user.username, user.password);
      return page;
    },
    async boxCaughtUp() {
      if (!box) throw new Error('no box in this rig');
      const want = (await central.hq('/hq-api/api/catalogue')).rev as number;
      await waitFor(
        `box at catalogue rev ${want}`,
        async () => ((await syncStatus(box!)).catalogue?.rev ?? 0) >= want,
        30_000,
      );
    },
    async stop() {
      await browser?.close();
      await box?.stop();
      await central.stop();
    },
  };
  return rig;
}

/** Signs in on the console's sign-in form (the demo's only tenant is known: no tenant field). */
export async function signIn(page: Page, username: string, password: string): Promise<void> {
  const form = page.getByTestId('signin');
  await form.locator('input[name=username]').fill(username);
  await form.locator('input[name=password]').fill(password);
  await form.locator('button[type=submit]').click();
  // Not expect.poll: the rig is also used in beforeAll, outside any test.
  await page.getByTestId('user').waitFor({ timeout: 15_000 });
}

/** axe-core's critical and serious violations (shared with the box's screens' tests: test/support/axe.ts). */
export { seriousViolations } from './axe.js';
