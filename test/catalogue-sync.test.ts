import Database from 'better-sqlite3';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import nacl from 'tweetnacl';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import demo from '../native-config/demo.json';
import { PATHS, signRequest } from '../src/shared/sync-protocol.js';
import { DEMO, requestToken, startTestBox, type TestBox } from './support/box.js';
import { CENTRAL_DEMO, centralCli, startTestCentral, type TestCentral } from './support/central.js';
import { command, newOrder } from './support/orders.js';
import { openSocket } from './support/socket.js';
import { enrol, FAST_SYNC, syncCli, syncStatus, waitFor } from './support/sync.js';

// Down: the catalogue (docs/sync.md "Down: the catalogue"). One real central (embedded PostgreSQL), two real boxes of
// the demo tenant enrolled at it; the checks share them and run in order.
const CONFIG = { sync: { ...FAST_SYNC.sync, catalogueWaitSeconds: 20 } };
const VENUE = DEMO.openVenue;
const MENU = DEMO.menu;
let central: TestCentral;
let boxes: TestBox[] = [];
let hqToken: string;

beforeAll(async () => {
  central = await startTestCentral();
  boxes = await Promise.all([startTestBox({ config: CONFIG }), startTestBox({ config: CONFIG })]);
  for (const box of boxes) await enrol(box, central.url(''), await central.enrolCode(VENUE));
  hqToken = await central.hqToken();
  await Promise.all(boxes.map((b) => caughtUp(b)));
}, 120_000);
afterAll(async () => {
  for (const box of boxes) await box?.stop();
  await central?.stop();
});

/** An HQ write; the parsed body with the status. */
async function hq(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(central.url(`/hq-api/api${path}`), {
    method,
    headers: {
      authorization: `Bearer ${hqToken}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: JSON.parse(await res.text()) };
}
const centralRev = async (): Promise<number> => (await hq('GET', '/catalogue')).body.rev;

/** Waits until the box has applied the central's current rev (or `rev`). */
async function caughtUp(box: TestBox, rev?: number): Promise<void> {
  const want = rev ?? (await centralRev().catch(() => 1));
  await waitFor(
    `box at catalogue rev ${want}`,
    async () => ((await syncStatus(box)).catalogue?.rev ?? 0) >= want,
    30_000,
  );
}

async function priceAt(box: TestBox, productId: string): Promise<string | undefined> {
  const token = (await box.token()).access_token;
  const res = await box.get(`/menu-api/api/menu/${MENU}?channel=TAKE_AWAY&instance=${VENUE}`, token);
  const find = (n: any): any =>
    n.id === productId && n.kind === 'svc/product' ? n : (n.items ?? []).map(find).find(Boolean);
  return find(((await res.json()) as any).root)?.price;
}

describe('the catalogue flows down from the central', () => {
  test("enrolled boxes take the central's catalogue as theirs: same checksum, sync status shows the rev", async () => {
    const cat = (await hq('GET', '/catalogue')).body;
    expect(cat).toMatchObject({ tenant: DEMO.tenant, mode: 'snapshot' });
    expect(cat.rev).toBeGreaterThan(0);
    for (const box of boxes) {
      const s = await syncStatus(box);
      expect(s.catalogue).toMatchObject({ rev: cat.rev, checksum: cat.checksum, lastError: null });
    }
    // Staff users went down as scrypt hashes only; the plain passwords of the demo file never left the central.
    expect(JSON.stringify(cat)).not.toContain('kelner-demo-1');
    const text = await syncCli(['status', '--data-dir', boxes[0]!.dataDir]);
    expect(text.stdout).toMatch(new RegExp(`catalogue\\s+rev ${cat.rev}, applied`));
  });

  test("a price change reaches both boxes' menus within 2 s; lines already ordered keep their price; staff sockets hear MENU_CHANGED", async () => {
    const box = boxes[0]!;
    const staff = (await box.token('kelner', 'kelner-demo-1')).access_token;
    const before = await priceAt(box, 'pierogi-ruskie');
    const order = await command(box, staff, 'new', newOrder(VENUE, [{ productId: 'pierogi-ruskie', quantity: 2 }]));
    const ws = await openSocket(box.wsUrl(`/ordering-api/ws?venue=${VENUE}`), staff);
    const started = Date.now();
    const res = await hq('PATCH', `/menus/${MENU}/products/pierogi-ruskie`, { price: '99.50' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ changed: true });
    await Promise.all(
      boxes.map((b) => waitFor('the new price', async () => (await priceAt(b, 'pierogi-ruskie')) === '99.50', 5000)),
    );
    const elapsed = Date.now() - started;
    expect(elapsed).toBeLessThan(2000);
    expect(await ws.next('MENU_CHANGED')).toMatchObject({ payload: { venue: VENUE, menu: MENU, rev: res.body.rev } });
    ws.close();
    // The order's lines carry the product as sold: the old price, and the old price in their snapshot.
    const view = (await (await box.get(`/ordering-api/api/order/${order.orderId}`, staff)).json()) as any;
    const line = view.buckets[0].lines[0];
    expect(before).not.toBe('99.50');
    expect(line.price).toBe(before);
    expect(line.product.price).toBe(before);
    // A new line is priced from the new menu.
    const next = await command(box, staff, 'new', newOrder(VENUE, [{ productId: 'pierogi-ruskie', quantity: 1 }]));
    const nextView = await waitFor('the new order', async () => {
      const r = await box.get(`/ordering-api/api/order/${next.orderId}`, staff);
      return r.status === 200 ? ((await r.json()) as any) : undefined;
    });
    expect(nextView.buckets[0].lines[0].price).toBe('99.50');
    console.log(`price change at the central to both boxes' menus: ${elapsed} ms`);
  });

  test("headquarters' sold-out flag makes a product unavailable on the box; clearing it makes it available again", async () => {
    const box = boxes[1]!;
    const set = await hq('PUT', `/sold-out/${VENUE}/zurek`, { reason: 'recall' });
    expect(set.status).toBe(200);
    await caughtUp(box, set.body.rev);
    const token = (await box.token()).access_token;
    const menu = (await (
      await box.get(`/menu-api/api/menu/${MENU}?channel=TAKE_AWAY&instance=${VENUE}`, token)
    ).json()) as any;
    expect(menu.locks).toContainEqual(expect.objectContaining({ productId: 'zurek', venue: VENUE, reason: 'recall' }));
    const cleared = await hq('DELETE', `/sold-out/${VENUE}/zurek`);
    expect(cleared.status).toBe(200);
    await caughtUp(box, cleared.body.rev);
    const after = (await (
      await box.get(`/menu-api/api/menu/${MENU}?channel=TAKE_AWAY&instance=${VENUE}`, token)
    ).json()) as any;
    expect(after.locks.map((l: { productId: string }) => l.productId)).not.toContain('zurek');
  });

  test('a revoked staff user is refused a token, and their refresh token and access token stop working', async () => {
    const box = boxes[0]!;
    const before = await box.token('kuchnia', 'kuchnia-demo-1');
    const res = await hq('DELETE', '/staff-users/kuchnia');
    expect(res.status).toBe(200);
    await caughtUp(box, res.body.rev);
    const password = await requestToken(box, {
      grant_type: 'password',
      username: 'kuchnia',
      password: 'kuchnia-demo-1',
    });
    expect(password.status).toBe(400);
    expect(await password.json()).toMatchObject({ error: 'invalid_grant' });
    const refresh = await requestToken(box, { grant_type: 'refresh_token', refresh_token: before.refresh_token });
    expect(refresh.status).toBe(400);
    expect(await refresh.json()).toMatchObject({ error: 'invalid_grant' });
    expect((await box.get('/ordering-api/api/orders', before.access_token)).status).toBe(401);
    // Another staff user is untouched.
    expect((await box.token('kelner', 'kelner-demo-1')).scope).toBe('read write');
  });

  test("bad headquarters input gets 400 with the field's JSON pointer, and writes nothing", async () => {
    const rev = await centralRev();
    const venue = demo.tenants[0]!.venues[0]!;
    const cases: [string, string, unknown, string][] = [
      ['PUT', `/venues/${venue.id}`, { ...venue, geoPosition: { lat: 123, lng: 19 } }, '/geoPosition/lat'],
      ['PUT', `/venues/${venue.id}`, { ...venue, menu: 'no-such-menu' }, '/menu'],
      ['PUT', `/venues/${venue.id}`, { ...venue, id: demo.tenants[0]!.venues[1]!.id }, '/id'],
      [
        'PUT',
        `/venues/${venue.id}`,
        { ...venue, channelConstraints: { TAKE_AWAY: { active: true, minDeliveryTime: '1h', week: {} } } },
        '/channelConstraints/TAKE_AWAY/minDeliveryTime',
      ],
      ['PATCH', `/menus/${MENU}/products/zurek`, { price: '12.345' }, '/price'],
      [
        'PUT',
        `/menus/${MENU}`,
        { root: { kind: 'svc/group/category', id: 'r', details: { literals: {} }, items: [{ kind: 'oops' }] } },
        '/root/items/0',
      ],
      ['PUT', '/staff-users/nowy', { scope: 'read write' }, '/password'],
      ['PUT', '/staff-users/nowy', { password: 'short', scope: 'read write' }, '/password'],
      ['PUT', '/staff-users/nowy', { password: 'long-enough-1', scope: 'admin' }, '/scope'],
      ['PUT', '/warehouses/not-a-uuid', { name: 'X' }, 'id'],
    ];
    for (const [method, path, body, pointer] of cases) {
      const res = await hq(method, path, body);
      expect(res.status, `${method} ${path}`).toBe(400);
      expect(
        res.body.codes.map((c: { args: string[] }) => c.args[0]),
        `${method} ${path}`,
      ).toContain(pointer);
    }
    // A product listed twice: the pointer names the second.
    const menu = (await hq('GET', '/catalogue')).body.items.find((i: any) => i.type === 'menu' && i.id === MENU).data
      .root;
    const dup = { root: { ...menu, items: [...menu.items, menu.items[0]] } };
    const res = await hq('PUT', `/menus/${MENU}`, dup);
    expect(res.status).toBe(400);
    expect(res.body.codes[0].args[0]).toMatch(/^\/root\/items\/\d+\//);
    // Read scope cannot write; unknown things are 404; a menu in use cannot be retired.
    expect((await hq('DELETE', '/venues/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await hq('DELETE', `/menus/${MENU}`)).status).toBe(409);
    expect(await centralRev()).toBe(rev);
  });

  test('a change set the box cannot apply leaves it on its last good catalogue, status says why, and the next good one mends it', async () => {
    const box = boxes[1]!;
    const good = (await hq('GET', '/catalogue')).body.items.find((i: any) => i.type === 'menu' && i.id === MENU).data
      .root;
    const goodRev = (await syncStatus(box)).catalogue!.rev;
    const price = await priceAt(box, 'pierogi-ruskie');
    // Headquarters' API refuses such a tree; a central bug or a hand edit in PostgreSQL does not.
    const facts = JSON.parse(readFileSync(join(central.dataDir, 'central-db.json'), 'utf8')) as {
      port: number;
      user: string;
      password: string;
    };
    const db = new pg.Client({
      host: '127.0.0.1',
      port: facts.port,
      user: facts.user,
      password: facts.password,
      database: 'postgres',
    });
    await db.connect();
    try {
      await db.query(
        `WITH r AS (UPDATE catalogue_revs SET rev = rev + 1 WHERE tenant_id = $1 RETURNING rev)
        UPDATE menus SET root = jsonb_set(root, '{items,0,kind}', '"svc/bogus"'), rev = (SELECT rev FROM r)
        WHERE tenant_id = $1 AND menu_id = $2`,
        [DEMO.tenant, MENU],
      );
      await db.query("SELECT pg_notify('catalogue', $1)", [DEMO.tenant]);
    } finally {
      await db.end();
    }
    const s = await waitFor('the refusal in sync status', async () => {
      const st = await syncStatus(box);
      return st.catalogue?.lastError ? st : undefined;
    });
    expect(s.catalogue).toMatchObject({ rev: goodRev });
    expect(s.catalogue!.lastError).toMatch(/menu menu-krakow/);
    expect(await priceAt(box, 'pierogi-ruskie')).toBe(price);
    expect(box.logs.some((l) => l.includes('not applied; serving the last good catalogue'))).toBe(true);
    // Headquarters puts the good tree back: the box applies it and the error clears.
    const fixed = await hq('PUT', `/menus/${MENU}`, { root: good });
    expect(fixed.status).toBe(200);
    await caughtUp(box, fixed.body.rev);
    expect((await syncStatus(box)).catalogue).toMatchObject({ lastError: null, rev: fixed.body.rev });
    expect(await priceAt(box, 'pierogi-ruskie')).toBe(price);
  });

  test('a menu changed while a box was stopped is applied when it starts again', async () => {
    const [, offline] = boxes;
    await offline!.stop();
    const res = await hq('PATCH', `/menus/${MENU}/products/pierogi-ruskie`, { price: '31.00' });
    expect(res.status).toBe(200);
    boxes[1] = await startTestBox({ dataDir: offline!.dataDir, config: CONFIG });
    await caughtUp(boxes[1]!, res.body.rev);
    expect(await priceAt(boxes[1]!, 'pierogi-ruskie')).toBe('31.00');
    // The demo file given again at start no longer overrides the central's data for its tenant.
    expect(boxes[1]!.logs.some((l) => l.includes('"mode":"changes"'))).toBe(true);
  });

  test('a cursor older than a purged tombstone gets a snapshot', async () => {
    const created = await hq('PUT', '/staff-users/kelner2', { password: 'kelner2-demo-1', scope: 'read write' });
    expect(created.status).toBe(200);
    await caughtUp(boxes[1]!, created.body.rev);
    expect((await boxes[1]!.token('kelner2', 'kelner2-demo-1')).scope).toBe('read write');
    const stale = boxes[1]!;
    await stale.stop();
    const retired = await hq('DELETE', '/staff-users/kelner2');
    expect(retired.status).toBe(200);
    const purge = await centralCli(['purge-tombstones', '--older-than-days', '0', '--data-dir', central.dataDir]);
    expect(purge.code, purge.stderr).toBe(0);
    expect(purge.stdout).toMatch(/[1-9]\d* tombstone\(s\) removed/);
    boxes[1] = await startTestBox({ dataDir: stale.dataDir, config: CONFIG });
    await caughtUp(boxes[1]!, retired.body.rev);
    expect(boxes[1]!.logs.some((l) => l.includes('"mode":"snapshot"'))).toBe(true);
    const refused = await requestToken(boxes[1]!, {
      grant_type: 'password',
      username: 'kelner2',
      password: 'kelner2-demo-1',
    });
    expect(refused.status).toBe(400);
    expect((await syncStatus(boxes[1]!)).catalogue!.checksum).toBe((await hq('GET', '/catalogue')).body.checksum);
  });

  test("a box of tenant A never receives tenant B's data", async () => {
    const revA = await centralRev();
    const b = structuredClone(demo);
    const tenantB = '9d0c7a1e-1111-4c2d-8e3f-000000000b0b';
    const swap = (id: string) => id.replace(/^.{8}/, 'bbbbbbbb');
    b.tenants[0]!.id = tenantB;
    b.tenants[0]!.name = 'Tenant B';
    for (const v of b.tenants[0]!.venues) {
      v.id = swap(v.id);
      v.warehouse = swap(v.warehouse);
      v.name = `B ${v.name}`;
    }
    for (const w of b.tenants[0]!.warehouses) w.id = swap(w.id);
    const file = join(central.dataDir, '..', `tenant-b-${Date.now()}.json`);
    writeFileSync(file, JSON.stringify(b));
    const imported = await centralCli(['import', file, '--data-dir', central.dataDir]);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toMatch(new RegExp(`tenant ${tenantB}: imported at rev 1`));
    // Importing again changes nothing.
    expect((await centralCli(['import', file, '--data-dir', central.dataDir])).stdout).toMatch(/unchanged \(rev 1\)/);
    // A's rev did not move, and A's boxes hold nothing of B.
    expect(await centralRev()).toBe(revA);
    await new Promise((r) => setTimeout(r, 500));
    for (const box of boxes) {
      const db = new Database(join(box.dataDir, 'venue-box.db'), { readonly: true });
      try {
        for (const table of ['tenants', 'venues', 'warehouses', 'staff_users', 'menus']) {
          const col = table === 'tenants' ? 'id' : 'tenant_id';
          expect(
            (db.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE ${col} = ?`).get(tenantB) as { n: number }).n,
            table,
          ).toBe(0);
        }
        expect(JSON.stringify(db.prepare('SELECT venue_json FROM venues').all())).not.toContain('B Pod Wawelem');
      } finally {
        db.close();
      }
    }
    // A's device asking in B's name is refused: the signature names the tenant, the device is A's.
    const device = JSON.parse(readFileSync(join(boxes[0]!.dataDir, 'sync-device.json'), 'utf8')) as {
      deviceId: string;
      secretKey: string;
      tenant: string;
    };
    const ask = async (tenant: string) => {
      const path = `${PATHS.catalogue}?after=0&wait=0`;
      const request = { method: 'GET', pathAndQuery: path, tenant, deviceId: device.deviceId, body: '' };
      const sign = (m: Uint8Array) => nacl.sign.detached(m, Buffer.from(device.secretKey, 'base64'));
      return fetch(central.url(path), { headers: await signRequest(request, sign, Date.now()) });
    };
    expect((await ask(tenantB)).status).toBe(401);
    const own = await ask(device.tenant);
    expect(own.status).toBe(200);
    const body = (await own.json()) as any;
    expect(body.tenant).toBe(CENTRAL_DEMO.tenant);
    expect(JSON.stringify(body)).not.toContain(tenantB);
  });
});
