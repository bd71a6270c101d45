import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import WebSocket from 'ws';
import { basic, DEMO, startTestBox, type TestBox } from './support/box.js';
import { expectOneLineFailure, runCli } from './support/cli.js';
import { type Answer, type Nginx, requestFrom, startNginx } from './support/nginx.js';
import { CHROMIUM_ARGS, SYSTEM_PACKAGES, skipWithout } from './support/system-packages.js';

// The box behind Debian's nginx, configured as docs/api.md "Behind a reverse proxy (nginx)" shows. Each client
// binds its own loopback address (127.0.0.2, 127.0.0.3), so nginx's $remote_addr differs per client while nginx
// reaches the boxes from 127.0.0.1. One box trusts nginx (http.trustedProxies); the other, configured as before
// the option existed, shows what the same traffic did then.
const skip = skipWithout(import.meta.url, 'nginx');
const A = '127.0.0.2';
const B = '127.0.0.3';
const OUTSIDER = '127.0.0.4';
const TRUSTED = 0;
const UNTRUSTED = 1;
const FORWARDED = 2;

let trusted: TestBox;
let untrusted: TestBox;
let forwarded: TestBox;
let nginx: Nginx;

beforeAll(async () => {
  if (skip) return;
  const common = { auth: { anonymous: { perAddressPerMinute: 3 } } };
  [trusted, untrusted, forwarded] = await Promise.all([
    startTestBox({
      config: {
        ...common,
        http: { trustedProxies: ['127.0.0.1'] },
        // The proxy's own address listed, as an operator might: with the proxy trusted it no longer opens /metrics
        // to everyone behind it.
        metrics: { allowAddresses: ['127.0.0.1', A] },
      },
    }),
    startTestBox({ config: { ...common, metrics: { allowAddresses: ['127.0.0.1'] } } }),
    startTestBox({ config: { ...common, http: { trustedProxies: ['127.0.0.1'], forwardedHeader: 'forwarded' } } }),
  ]);
  nginx = await startNginx([
    { port: trusted.port },
    { port: untrusted.port },
    // RFC 7239 as docs/api.md shows it for nginx: set, not appended, so a client's own Forwarded is replaced.
    { port: forwarded.port, extra: 'proxy_set_header Forwarded "for=$remote_addr";' },
  ]);
}, 60_000);
afterAll(async () => {
  await nginx?.stop();
  await trusted?.stop();
  await untrusted?.stop();
  await forwarded?.stop();
});

const tokenForm = (form: Record<string, string>) => ({
  method: 'POST',
  headers: {
    'content-type': 'application/x-www-form-urlencoded',
    'x-tenant': DEMO.tenant,
    authorization: basic(),
  },
  body: new URLSearchParams(form).toString(),
});
const viaNginx = (box: number, from: string, form: Record<string, string>, headers: Record<string, string> = {}) => {
  const options = tokenForm(form);
  return requestFrom(from, nginx.url(box, '/auth-oauth2/oauth/token'), {
    ...options,
    headers: { ...options.headers, ...headers },
  });
};
const anonymous = { grant_type: 'password', username: 'anonymous', password: '' };
const wrongPassword = { grant_type: 'password', username: DEMO.staff.username, password: 'wrong' };
const rightPassword = { grant_type: 'password', username: DEMO.staff.username, password: DEMO.staff.password };
const statuses = (answers: Answer[]) => answers.map((a) => a.status);

describe.skipIf(skip)('behind nginx', () => {
  test("one client's wrong passwords do not throttle another's sign-in", async () => {
    for (const box of [TRUSTED, UNTRUSTED]) {
      const wrong: Answer[] = [];
      for (let i = 0; i < 6; i++) wrong.push(await viaNginx(box, A, wrongPassword));
      expect(statuses(wrong)).toEqual([400, 400, 400, 400, 400, 429]);
    }
    // The trusted box keys the throttle by the client nginx forwarded for: B signs in.
    expect((await viaNginx(TRUSTED, B, rightPassword)).status).toBe(200);
    // Without trustedProxies every client is nginx's 127.0.0.1: A's guesses lock B out too.
    expect((await viaNginx(UNTRUSTED, B, rightPassword)).status).toBe(429);
  });

  test("one client's anonymous burst does not use up another's, even with its own X-Forwarded-For", async () => {
    for (const box of [TRUSTED, UNTRUSTED]) {
      const burst: Answer[] = [];
      for (let i = 0; i < 4; i++) burst.push(await viaNginx(box, A, anonymous));
      expect(statuses(burst)).toEqual([200, 200, 200, 429]);
    }
    // nginx appends A's address to what A wrote: the right-most hop that is not nginx is still A.
    const forged = await viaNginx(TRUSTED, A, anonymous, { 'x-forwarded-for': '192.0.2.77' });
    expect(forged.status).toBe(429);
    expect(forged.headers['retry-after']).toMatch(/^\d+$/);
    expect((await viaNginx(TRUSTED, B, anonymous)).status).toBe(200);
    expect((await viaNginx(UNTRUSTED, B, anonymous)).status).toBe(429);
  });

  test('http.forwardedHeader "forwarded": the client is read from Forwarded, and X-Forwarded-For is ignored', async () => {
    const burst: Answer[] = [];
    for (let i = 0; i < 4; i++) burst.push(await viaNginx(FORWARDED, A, anonymous));
    expect(statuses(burst)).toEqual([200, 200, 200, 429]);
    // nginx appends to X-Forwarded-For as well, but only Forwarded is read; A's own Forwarded is replaced.
    const own = await viaNginx(FORWARDED, A, anonymous, { 'x-forwarded-for': '192.0.2.1', forwarded: 'for=192.0.2.1' });
    expect(own.status).toBe(429);
    expect((await viaNginx(FORWARDED, B, anonymous)).status).toBe(200);
    // From the trusted address itself, X-Forwarded-For names nobody: four "clients" are one, the proxy.
    const proxyItself: Answer[] = [];
    for (let i = 1; i <= 4; i++)
      proxyItself.push(
        await requestFrom('127.0.0.1', forwarded.url('/auth-oauth2/oauth/token'), {
          ...tokenForm(anonymous),
          headers: { ...tokenForm(anonymous).headers, 'x-forwarded-for': `198.51.100.${i}` },
        }),
      );
    expect(statuses(proxyItself)).toEqual([200, 200, 200, 429]);
  });

  test('standby promote, taken from this machine only, is refused to a LAN client nginx forwards', async () => {
    const promote = (box: number) => requestFrom(A, nginx.url(box, '/standby-api/promote'), { method: 'POST' });
    const refused = await promote(TRUSTED);
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.text)).toMatchObject({ codes: [{ code: 'forbidden' }] });
    // Without trustedProxies, nginx on the box makes every client look like the box itself.
    expect((await promote(UNTRUSTED)).status).toBe(200);
    expect((await requestFrom('127.0.0.1', trusted.url('/standby-api/promote'), { method: 'POST' })).status).toBe(200);
  });

  test('X-Forwarded-For from a client that is not the proxy is ignored', async () => {
    const direct = (i: number) =>
      requestFrom(OUTSIDER, trusted.url('/auth-oauth2/oauth/token'), {
        ...tokenForm(anonymous),
        headers: { ...tokenForm(anonymous).headers, 'x-forwarded-for': `198.51.100.${i}` },
      });
    const answers: Answer[] = [];
    for (let i = 1; i <= 4; i++) answers.push(await direct(i));
    expect(statuses(answers)).toEqual([200, 200, 200, 429]);
    // Nor does it open /metrics by naming an allowed address.
    const metrics = await requestFrom(OUTSIDER, trusted.url('/metrics'), { headers: { 'x-forwarded-for': A } });
    expect(metrics.status).toBe(401);
  });

  test("/metrics' allowAddresses goes by the address nginx forwarded for, not nginx's own", async () => {
    expect((await requestFrom(A, nginx.url(TRUSTED, '/metrics'))).status).toBe(200);
    // 127.0.0.1 (nginx) is listed, but B is who asked.
    const refused = await requestFrom(B, nginx.url(TRUSTED, '/metrics'));
    expect(refused.status).toBe(401);
    expect(JSON.parse(refused.text)).toMatchObject({ codes: [{ code: 'unauthorized' }] });
    // A request nginx's host makes itself, with nothing forwarded, is the proxy's.
    expect((await requestFrom('127.0.0.1', trusted.url('/metrics'))).status).toBe(200);
    // Without trustedProxies, listing the proxy opens /metrics to everyone behind it (docs/operations.md).
    expect((await requestFrom(B, nginx.url(UNTRUSTED, '/metrics'))).status).toBe(200);
  });

  test('a socket opened with a ticket through nginx: the access log holds no token', async () => {
    const signIn = await viaNginx(TRUSTED, B, rightPassword);
    const token = (JSON.parse(signIn.text) as { access_token: string }).access_token;
    const ticketAnswer = await requestFrom(B, nginx.url(TRUSTED, '/ordering-api/api/socket-ticket'), {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(ticketAnswer.status).toBe(200);
    const { ticket } = JSON.parse(ticketAnswer.text) as { ticket: string };
    const hello = await helloVia(nginx.wsUrl(TRUSTED, `/ordering-api/ws?venue=${DEMO.openVenue}&ticket=${ticket}`), B);
    expect(hello).toMatchObject({ type: 'HELLO', payload: { venue: DEMO.openVenue } });

    // nginx writes a request's line when it ends: for a socket, once it is closed.
    await expect
      .poll(() => nginx.accessLog().includes(`GET /ordering-api/ws?venue=${DEMO.openVenue}&ticket=`))
      .toBe(true);
    expect(nginx.accessLog()).not.toContain(token);
    // The query form old clients use is what the docs warn of: the token, stored in the access log.
    await helloVia(nginx.wsUrl(TRUSTED, `/ordering-api/ws?access_token=${token}`), B);
    await expect.poll(() => nginx.accessLog().includes(`access_token=${token}`)).toBe(true);
  });

  test.skipIf(skipWithout(import.meta.url, 'chromium'))(
    "the kiosk screen opens its socket with a ticket: no token in nginx's access log",
    async () => {
      const browser = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'vb-chromium-')), {
        executablePath: SYSTEM_PACKAGES.chromium,
        headless: true,
        args: CHROMIUM_ARGS,
      });
      try {
        // Only what this screen adds to the log (another test writes a token there on purpose).
        const before = nginx.accessLog().length;
        const logged = () => nginx.accessLog().slice(before);
        const page = await browser.newPage();
        const sockets: string[] = [];
        const frames: string[] = [];
        page.on('websocket', (ws) => {
          sockets.push(ws.url());
          ws.on('framereceived', (f) => frames.push(String(f.payload)));
        });
        await page.goto(nginx.url(TRUSTED, `/kiosk?venue=${DEMO.openVenue}`));
        await expect.poll(() => frames.some((f) => f.includes('"HELLO"')), { timeout: 15_000 }).toBe(true);
        expect(sockets[0]).toMatch(/\/ordering-api\/ws\?ticket=[\w-]+$/);
        // nginx writes a request's line when it ends: for a socket, when it closes.
        await page.close();
        await expect.poll(() => logged().includes('GET /ordering-api/ws?ticket='), { timeout: 15_000 }).toBe(true);
        expect(logged()).not.toMatch(/access_token=|eyJ/);
      } finally {
        await browser.close();
      }
    },
    60_000,
  );
});

/** Opens the socket from `localAddress`, takes its first frame, and closes it. */
function helloVia(url: string, localAddress: string): Promise<{ type: string; payload: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { localAddress });
    ws.once('message', (data) => {
      resolve(JSON.parse(String(data)) as { type: string; payload: Record<string, unknown> });
      ws.close();
    });
    ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
    ws.once('error', reject);
  });
}

describe('the options', () => {
  test.each([
    [
      'an entry that is no address',
      { trustedProxies: ['127.0.0.1', 'proxy.local'] },
      /http\/trustedProxies\/1: not an IP/,
    ],
    ['a CIDR range too wide', { trustedProxies: ['10.0.0.0/33'] }, /http\/trustedProxies\/0: not an IP/],
    ['a header the box does not read', { forwardedHeader: 'x-real-ip' }, /http\/forwardedHeader/],
  ])('a box config with %s: exit 78, one line naming the option', (_name, http, pattern) => {
    const dir = mkdtempSync(join(tmpdir(), 'vb-proxy-config-'));
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ http }));
    const r = runCli([
      'serve',
      '--host',
      '127.0.0.1',
      '--data-dir',
      join(dir, 'data'),
      '--config',
      join(dir, 'config.json'),
    ]);
    expectOneLineFailure(r, pattern, 78);
  });

  test("the central's --forwarded-header takes x-forwarded-for or forwarded: anything else is a usage error", () => {
    const r = runCli(['central', 'serve', '--trusted-proxies', '127.0.0.1', '--forwarded-header', 'x-real-ip']);
    expectOneLineFailure(
      r,
      /--forwarded-header must be x-forwarded-for or forwarded, got x-real-ip/,
      64,
      'venue-box central',
    );
  });
});
