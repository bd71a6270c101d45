import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CENTRAL_DEMO, centralTokenRequest, startTestCentral, type TestCentral } from './support/central.js';
import { expectApiError } from './support/fixtures.js';
import { SimDevice } from './support/sim-device.js';

// The central's support of the headquarters console (docs/sync.md "The headquarters console"): its files, the
// sign-in facts and public client, fleet actions, If-Match on catalogue changes, a price set everywhere, a stock
// document's ledger. One real central (embedded PostgreSQL) with a console directory of its own, boxes simulated
// with their own keys (test/support/sim-device.ts).
const VENUE = CENTRAL_DEMO.venues[0]!;
const WAREHOUSE = CENTRAL_DEMO.warehouses[0]!;
let central: TestCentral;
let token: string;
let readToken: string;
const consoleDir = mkdtempSync(join(tmpdir(), 'vb-hq-console-'));
const INDEX = '<!doctype html><title>HQ</title><script type="module" src="/assets/main-TEST1.js"></script>';

beforeAll(async () => {
  mkdirSync(join(consoleDir, 'assets'));
  writeFileSync(join(consoleDir, 'index.html'), INDEX);
  writeFileSync(join(consoleDir, 'assets', 'main-TEST1.js'), `console.log(${JSON.stringify('x'.repeat(2000))});`);
  central = await startTestCentral({ args: ['--console-dir', consoleDir] });
  token = await central.hqToken();
  readToken = await signIn({ scope: 'read' });
}, 60_000);
afterAll(async () => {
  await central?.stop();
});

async function signIn(extra: Record<string, string> = {}): Promise<string> {
  const res = await centralTokenRequest(central, {
    grant_type: 'password',
    ...CENTRAL_DEMO.hqUser,
    ...extra,
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { access_token: string }).access_token;
}

/** A call to the HQ API; JSON bodies as JSON. */
function hq(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
  bearer = token,
): Promise<Response> {
  return fetch(central.url(`/hq-api/api${path}`), {
    method,
    headers: {
      authorization: `Bearer ${bearer}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}
async function hqJson(method: string, path: string, body?: unknown, headers?: Record<string, string>) {
  const res = await hq(method, path, body, headers);
  return { status: res.status, body: JSON.parse(await res.text()) };
}
type Item = { type: string; id: string; rev: number; data: any };
async function catalogue(): Promise<{ rev: number; items: Item[] }> {
  return (await hqJson('GET', '/catalogue')).body;
}
const itemOf = async (type: string, id: string) =>
  (await catalogue()).items.find((i) => i.type === type && i.id === id);

/** A simulated box enrolled at `venue` with a code from the API. */
async function enrolledBox(venue = VENUE): Promise<SimDevice> {
  const { body } = await hqJson('POST', '/enrol-codes', { venueId: venue });
  const sim = new SimDevice(central.url(''));
  expect((await sim.enrol(body.code, 'till')).status).toBe(201);
  return sim;
}

describe("the console's files", () => {
  test('index.html at every page of the console, assets at their names, the API still the API', async () => {
    for (const page of ['/', '/dashboard', '/catalogue', '/fleet', '/orders', '/stock', '/reports']) {
      const res = await fetch(central.url(page));
      expect({ page, status: res.status, type: res.headers.get('content-type') }).toEqual({
        page,
        status: 200,
        type: 'text/html; charset=utf-8',
      });
      expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
      // Nothing injected markup could load from or send to another host.
      expect(res.headers.get('content-security-policy')).toContain("img-src 'self' data: blob:;");
      expect(res.headers.get('content-security-policy')).toContain("connect-src 'self';");
      expect(res.headers.get('cache-control')).toBe('no-cache');
      expect(await res.text()).toBe(INDEX);
    }
    const asset = await fetch(central.url('/assets/main-TEST1.js'), { headers: { 'accept-encoding': 'gzip' } });
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toContain('immutable');
    expect(await asset.text()).toContain('console.log');
    const head = await fetch(central.url('/fleet'), { method: 'HEAD' });
    expect(head.status).toBe(200);
    // No wildcard: a box's page, an unknown asset and an unknown API path are the API's 404.
    for (const path of ['/kitchen', '/assets/nope.js', '/hq-api/api/nope'])
      await expectApiError(await fetch(central.url(path)), 404, 'notFound');
    expect(central.logs.some((l) => l.includes('no web files found'))).toBe(false);
  });

  test('the bootstrap names the only tenant and the public client, without a token', async () => {
    const res = await fetch(central.url('/hq-app/bootstrap'));
    expect(await res.json()).toEqual({
      tenant: CENTRAL_DEMO.tenant,
      tenantName: expect.any(String),
      clientId: 'hq-console',
    });
  });
});

describe('the public client hq-console', () => {
  const tokenForm = (form: Record<string, string>) =>
    fetch(central.url('/auth-oauth2/oauth/token'), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-tenant': CENTRAL_DEMO.tenant },
      body: new URLSearchParams(form).toString(),
    });

  test('signs in and refreshes with its id alone; its refresh token is its own', async () => {
    const first = await tokenForm({ client_id: 'hq-console', grant_type: 'password', ...CENTRAL_DEMO.hqUser });
    expect(first.status).toBe(200);
    const pair = (await first.json()) as { access_token: string; refresh_token: string; scope: string };
    expect(pair.scope).toBe('read write');
    expect((await hq('GET', '/devices', undefined, {}, pair.access_token)).status).toBe(200);
    const renewed = await tokenForm({
      client_id: 'hq-console',
      grant_type: 'refresh_token',
      refresh_token: pair.refresh_token,
    });
    expect(renewed.status).toBe(200);
    const next = (await renewed.json()) as { refresh_token: string };
    // Another client cannot use it (RFC 6749 6: the refresh token is bound to the client it was issued to).
    const foreign = await centralTokenRequest(central, {
      grant_type: 'refresh_token',
      refresh_token: next.refresh_token,
    });
    expect(foreign.status).toBe(400);
    expect(await foreign.json()).toMatchObject({ error: 'invalid_grant' });
  });

  test('a wrong password is invalid_grant; another id without a secret is invalid_client', async () => {
    const wrong = await tokenForm({
      client_id: 'hq-console',
      grant_type: 'password',
      username: 'centrala',
      password: 'x',
    });
    expect(wrong.status).toBe(400);
    expect(await wrong.json()).toMatchObject({ error: 'invalid_grant' });
    const other = await tokenForm({ client_id: 'demo-kiosk', grant_type: 'password', ...CENTRAL_DEMO.hqUser });
    expect(other.status).toBe(401);
    expect(await other.json()).toMatchObject({ error: 'invalid_client' });
  });
});

describe('enrolment codes, devices, revocation', () => {
  test('a code comes with the command to type on the box, naming the central as the request reached it', async () => {
    const res = await hq('POST', '/enrol-codes', { venueId: VENUE, ttlHours: 2 });
    expect(res.status).toBe(201);
    const body = (await res.json()) as { code: string; expiresAt: string; command: string };
    expect(body).toEqual({
      code: expect.stringMatching(/^[0-9A-Z]{4}(-[0-9A-Z]{4}){3}$/),
      venueId: VENUE,
      expiresAt: expect.any(String),
      command: `venue-box sync enrol --central http://127.0.0.1:${central.port} --code ${body.code}`,
    });
    expect(Math.abs(Date.parse(body.expiresAt) - Date.now() - 2 * 3_600_000)).toBeLessThan(60_000);
    const proxied = await hqJson('POST', '/enrol-codes', { venueId: VENUE }, { 'x-forwarded-proto': 'https' });
    expect(proxied.body.command).toMatch(/^venue-box sync enrol --central https:\/\/127\.0\.0\.1:\d+ --code /);
    expect(Math.abs(Date.parse(proxied.body.expiresAt) - Date.now() - 24 * 3_600_000)).toBeLessThan(60_000);
    const sim = new SimDevice(central.url(''));
    expect((await sim.enrol(body.code)).status).toBe(201);
    expect(sim.venue).toBe(VENUE);
  });

  test('bad enrolment code requests: 400 naming the field, nothing made', async () => {
    const retired = randomUUID();
    const venue = structuredClone((await itemOf('venue', VENUE))!.data);
    expect((await hq('PUT', `/venues/${retired}`, { ...venue, id: retired, name: 'Closed' })).status).toBe(200);
    expect((await hq('DELETE', `/venues/${retired}`)).status).toBe(200);
    for (const [body, field] of [
      [{ venueId: 'not-a-uuid' }, '/venueId'],
      [{ venueId: randomUUID() }, '/venueId'],
      [{ venueId: retired }, '/venueId'],
      [{}, '/venueId'],
      [{ venueId: VENUE, ttlHours: 0 }, '/ttlHours'],
      [{ venueId: VENUE, ttlHours: 169 }, '/ttlHours'],
      [{ venueId: VENUE, ttlHours: 1.5 }, '/ttlHours'],
      [{ venueId: VENUE, extra: 1 }, '/extra'],
    ] as const)
      await expectApiError(await hq('POST', '/enrol-codes', body), 400, 'invalidField', [field]);
    await expectApiError(
      await fetch(central.url('/hq-api/api/enrol-codes'), {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'text/plain' },
        body: '{}',
      }),
      415,
      'unsupportedMediaType',
    );
  });

  test("the devices list: venue name, program, catalogue rev, online, and the backlog's age on the central's clock", async () => {
    const sim = await enrolledBox();
    // The box's clock an hour ahead; its oldest unsent event written a minute before its hello.
    sim.clockMs = Date.now() + 3_600_000;
    sim.order();
    expect((await sim.hello({ oldestPendingMs: sim.clockMs - 60_000, version: '1.2.3' })).status).toBe(200);
    const list = (await hqJson('GET', '/devices')).body as any[];
    const device = list.find((d) => d.id === sim.deviceId);
    expect(device).toMatchObject({
      venue: VENUE,
      venueName: 'Pod Wawelem (Rynek)',
      name: 'till',
      status: 'active',
      version: '1.2.3',
      arch: null,
      update: null,
      catalogueRev: 0,
      online: true,
      lagEvents: 1,
    });
    expect(device).not.toHaveProperty('tenant');
    expect(Math.abs(Date.parse(device.oldestPendingAt) - (Date.now() - 60_000))).toBeLessThan(5_000);
    // The batch that reaches the box's newest event leaves nothing pending.
    expect((await sim.send(1, 1)).status).toBe(200);
    const after = ((await hqJson('GET', '/devices')).body as any[]).find((d) => d.id === sim.deviceId);
    expect(after).toMatchObject({ lagEvents: 0, oldestPendingAt: null });
    // A hello that says nothing is pending (or a box before the console, which does not say) clears it too.
    await sim.hello({ oldestPendingMs: sim.clockMs });
    await sim.hello({ oldestPendingMs: null });
    expect(((await hqJson('GET', '/devices')).body as any[]).find((d) => d.id === sim.deviceId).oldestPendingAt).toBe(
      null,
    );
    // A clock so far off that the time leaves years 1970-9999 is not kept (and never fails the hello).
    expect((await sim.hello({ oldestPendingMs: -1e15 })).status).toBe(200);
    expect(((await hqJson('GET', '/devices')).body as any[]).find((d) => d.id === sim.deviceId).oldestPendingAt).toBe(
      null,
    );
  });

  test('revoking: the device answered revoked, again unchanged; its hello refused; unknown ids 404', async () => {
    const sim = await enrolledBox();
    const first = await hqJson('POST', `/devices/${sim.deviceId}/revoke`);
    expect(first).toMatchObject({ status: 200, body: { id: sim.deviceId, status: 'revoked', venue: VENUE } });
    const again = await hqJson('POST', `/devices/${sim.deviceId}/revoke`);
    expect(again).toEqual(first);
    expect((await sim.hello()).status).toBe(401);
    await expectApiError(await hq('POST', `/devices/${randomUUID()}/revoke`), 404, 'notFound');
    await expectApiError(await hq('POST', '/devices/nope/revoke'), 404, 'notFound');
    const status = (await hqJson('GET', '/catalogue/status')).body;
    expect(status.devices.map((d: { deviceId: string }) => d.deviceId)).not.toContain(sim.deviceId);
  });

  test("the catalogue's status: the rev the boxes will get, and the rev each box applied", async () => {
    const sim = await enrolledBox();
    expect((await sim.hello()).status).toBe(200);
    const { rev } = await catalogue();
    const asked = Date.now();
    expect((await sim.catalogue(rev)).status).toBe(200);
    const status = (await hqJson('GET', '/catalogue/status')).body;
    expect(status.rev).toBe(rev);
    expect(status.devices.find((d: { deviceId: string }) => d.deviceId === sim.deviceId)).toEqual({
      deviceId: sim.deviceId,
      name: 'till',
      venueId: VENUE,
      catalogueRev: rev,
      catalogueRevAt: expect.any(String),
      lastContactAt: expect.any(String),
    });
    // When it first asked with that rev; asking again with the same one keeps that time.
    const first = status.devices.find((d: { deviceId: string }) => d.deviceId === sim.deviceId).catalogueRevAt;
    expect(Math.abs(Date.parse(first) - asked)).toBeLessThan(5000);
    expect((await sim.catalogue(rev)).status).toBe(200);
    const again = (await hqJson('GET', '/catalogue/status')).body;
    expect(again.devices.find((d: { deviceId: string }) => d.deviceId === sim.deviceId).catalogueRevAt).toBe(first);
  });

  test('each rev a box asks with is acknowledged, an older one too; its answer names the changes after it', async () => {
    const sim = await enrolledBox();
    // One more rev, so that the rev before it is a cursor (rev 0 asks for a snapshot).
    expect((await hq('PUT', `/warehouses/${randomUUID()}`, { name: 'acknowledged revs' })).status).toBe(200);
    const { rev } = await catalogue();
    const revOf = async () =>
      (await hqJson('GET', '/catalogue/status')).body.devices.find(
        (d: { deviceId: string }) => d.deviceId === sim.deviceId,
      ).catalogueRev;
    for (const after of [rev, rev - 1, rev - 1, rev]) {
      const answer = await sim.catalogue(after);
      expect(answer.body).toMatchObject({ rev, mode: 'changes', inbox: [] });
      expect(answer.body.items.length > 0).toBe(after < rev);
      expect(await revOf()).toBe(after);
    }
  });
});

describe('If-Match on catalogue changes', () => {
  const putWarehouse = (id: string, name: string, ifMatch?: string) =>
    hq('PUT', `/warehouses/${id}`, { name }, ifMatch === undefined ? {} : { 'if-match': ifMatch });

  test('the current rev passes; a stale one is 412 revisionChanged naming the rev and who; * and none do not check', async () => {
    const rev = (await itemOf('warehouse', WAREHOUSE))!.rev;
    const changed = await putWarehouse(WAREHOUSE, 'Magazyn A', `"${rev}"`);
    expect(changed.status).toBe(200);
    const now = ((await changed.json()) as { rev: number }).rev;
    expect((await itemOf('warehouse', WAREHOUSE))!.rev).toBe(now);
    const stale = await expectApiError(await putWarehouse(WAREHOUSE, 'Magazyn B', `"${rev}"`), 412, 'revisionChanged', [
      String(now),
    ]);
    expect(stale.message).toContain(`rev ${now} by centrala`);
    expect((await itemOf('warehouse', WAREHOUSE))!.data.name).toBe('Magazyn A');
    // A list of tags passes when one is current; a weak tag never matches (strong comparison).
    expect((await putWarehouse(WAREHOUSE, 'Magazyn C', `"${rev}", "${now}"`)).status).toBe(200);
    await expectApiError(await putWarehouse(WAREHOUSE, 'Magazyn D', `W/"${now + 1}"`), 412, 'revisionChanged');
    expect((await putWarehouse(WAREHOUSE, 'Magazyn E', '*')).status).toBe(200);
    expect((await putWarehouse(WAREHOUSE, 'Magazyn F')).status).toBe(200);
  });

  test('a row that does not exist, or was retired, is 412 with rev "0"; a stale DELETE retires nothing', async () => {
    const id = randomUUID();
    await expectApiError(await putWarehouse(id, 'Nowy', '"1"'), 412, 'revisionChanged', ['0']);
    expect(await itemOf('warehouse', id)).toBeUndefined();
    const made = (await (await putWarehouse(id, 'Nowy')).json()) as { rev: number };
    await expectApiError(
      await hq('DELETE', `/warehouses/${id}`, undefined, { 'if-match': `"${made.rev - 1}"` }),
      412,
      'revisionChanged',
      [String(made.rev)],
    );
    expect(await itemOf('warehouse', id)).toBeDefined();
    expect((await hq('DELETE', `/warehouses/${id}`, undefined, { 'if-match': `"${made.rev}"` })).status).toBe(200);
    await expectApiError(await putWarehouse(id, 'Znowu', `"${made.rev}"`), 412, 'revisionChanged', ['0']);
  });

  test('every kind of row is checked: menus, prices, staff users, clients, venues, sold-out flags', async () => {
    // No row of the catalogue is at this rev, whatever the other tests changed.
    const stale = { 'if-match': '"999999"' };
    const menu = (await itemOf('menu', 'menu-krakow'))!;
    const venue = (await itemOf('venue', VENUE))!;
    for (const [method, path, body] of [
      ['PUT', '/menus/menu-krakow', { root: menu.data.root }],
      ['PATCH', '/menus/menu-krakow/products/zurek', { price: '1.00' }],
      ['DELETE', '/menus/menu-krakow', undefined],
      ['PUT', `/venues/${VENUE}`, venue.data],
      ['PUT', '/staff-users/kelner-x', { password: 'password-1', scope: 'read write' }],
      ['PUT', '/clients/some-client', { clientSecret: 'secret-secret' }],
      ['PUT', `/sold-out/${VENUE}/zurek`, { reason: 'none' }],
      ['DELETE', `/sold-out/${VENUE}/zurek`, undefined],
    ] as const)
      await expectApiError(await hq(method, path, body, stale), 412, 'revisionChanged');
    expect((await catalogue()).rev).toBeGreaterThan(0);
  });

  test('a malformed If-Match is 400 naming the header', async () => {
    for (const value of ['5', '"abc"', '"1', 'W/5', '"01"', '"00"', '"-1"', '"1e3"'])
      await expectApiError(await putWarehouse(WAREHOUSE, 'X', value), 400, 'invalidField', ['If-Match']);
  });

  test('two changes racing with the same If-Match: exactly one 200 and one 412, the row holds the winner', async () => {
    for (let round = 0; round < 5; round++) {
      const { rev: before, items } = await catalogue();
      const rev = items.find((i) => i.type === 'warehouse' && i.id === WAREHOUSE)!.rev;
      const names = [`Wyścig ${round} A`, `Wyścig ${round} B`];
      const answers = await Promise.all(names.map((name) => putWarehouse(WAREHOUSE, name, `"${rev}"`)));
      expect(answers.map((a) => a.status).sort()).toEqual([200, 412]);
      const winner = names[answers.findIndex((a) => a.status === 200)]!;
      const after = await catalogue();
      expect(after.items.find((i) => i.type === 'warehouse' && i.id === WAREHOUSE)!.data.name).toBe(winner);
      // One rev taken: the loser wrote nothing and took no rev.
      expect(after.rev).toBe(before + 1);
    }
  });
});

describe('a price in every menu', () => {
  test('sets the price in each live menu that lists the product, at one rev', async () => {
    const menu = (await itemOf('menu', 'menu-krakow'))!;
    expect((await hq('PUT', '/menus/menu-copy', { root: menu.data.root })).status).toBe(200);
    const { rev } = await catalogue();
    const answer = await hqJson('PATCH', '/products/zurek/price', { price: '23.45' });
    expect(answer).toEqual({ status: 200, body: { rev: rev + 1, changed: true, menus: ['menu-copy', 'menu-krakow'] } });
    const priceIn = (root: any): string | undefined =>
      root.kind === 'svc/product'
        ? root.id === 'zurek'
          ? root.price
          : undefined
        : root.items.map(priceIn).find(Boolean);
    for (const id of ['menu-copy', 'menu-krakow']) expect(priceIn((await itemOf('menu', id))!.data.root)).toBe('23.45');
    expect((await hqJson('PATCH', '/products/zurek/price', { price: '23.45' })).body).toEqual({
      rev: rev + 1,
      changed: false,
      menus: ['menu-copy', 'menu-krakow'],
    });
    expect((await hq('DELETE', '/menus/menu-copy')).status).toBe(200);
  });

  test('bad input: 400 naming the field; a product no live menu lists: 404', async () => {
    await expectApiError(await hq('PATCH', '/products/zurek/price', { price: '1.234' }), 400, 'invalidField', [
      '/price',
    ]);
    await expectApiError(await hq('PATCH', '/products/zurek/price', {}), 400, 'invalidField', ['/price']);
    await expectApiError(await hq('PATCH', '/products/zurek/price', { price: 5 }), 400, 'invalidField', ['/price']);
    await expectApiError(
      await hq('PATCH', `/products/${'x'.repeat(300)}/price`, { price: '1.00' }),
      400,
      'invalidField',
      ['productId'],
    );
    await expectApiError(await hq('PATCH', '/products/no-such-product/price', { price: '1.00' }), 404, 'notFound');
  });
});

describe('a stock document with its ledger', () => {
  test('the document as the list gives it, plus the rows it booked in units', async () => {
    const sim = await enrolledBox();
    const id = randomUUID();
    sim.stockDocument(
      WAREHOUSE,
      [
        ['flour', 'kg', 2_500_000],
        ['salt', 'kg', -125],
      ],
      id,
    );
    expect((await sim.send(1, 1)).status).toBe(200);
    const docs = (await hqJson('GET', `/stock-documents?warehouseId=${WAREHOUSE}`)).body.items as any[];
    const listed = docs.find((d) => d.id === id);
    expect(listed).toMatchObject({ id, deviceId: sim.deviceId, kind: 'PZ' });
    const detail = await hqJson('GET', `/stock-documents/${id}`);
    expect(detail).toEqual({
      status: 200,
      body: {
        ...listed,
        ledger: [
          { warehouseId: WAREHOUSE, line: 1, itemId: 'flour', unit: 'kg', delta: 2.5 },
          { warehouseId: WAREHOUSE, line: 2, itemId: 'salt', unit: 'kg', delta: -0.000125 },
        ],
      },
    });
    await expectApiError(await hq('GET', `/stock-documents/${randomUUID()}`), 404, 'notFound');
  });
});

describe('a read-only token', () => {
  test('gets 403 on every change the console makes, and nothing is written', async () => {
    const before = await catalogue();
    const changes: [string, string, unknown][] = [
      ['POST', '/enrol-codes', { venueId: VENUE }],
      ['POST', `/devices/${randomUUID()}/revoke`, undefined],
      ['PATCH', '/products/zurek/price', { price: '9.99' }],
      ['PUT', `/warehouses/${WAREHOUSE}`, { name: 'read-only' }],
      ['DELETE', `/warehouses/${WAREHOUSE}`, undefined],
      ['PATCH', '/menus/menu-krakow/products/zurek', { price: '9.99' }],
      ['PUT', `/sold-out/${VENUE}/zurek`, {}],
    ];
    for (const [method, path, body] of changes) {
      const res = await hq(method, path, body, { 'if-match': '*' }, readToken);
      await expectApiError(res, 403, 'forbidden');
    }
    expect((await catalogue()).rev).toBe(before.rev);
    // Reads are allowed.
    for (const path of ['/devices', '/catalogue/status'])
      expect((await hq('GET', path, undefined, {}, readToken)).status).toBe(200);
  });
});
