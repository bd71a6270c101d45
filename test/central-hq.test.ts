import { afterAll, beforeAll, expect, test } from 'vitest';
import {
  CENTRAL_DEMO,
  centralTokenRequest,
  hqTokenRequest,
  startTestCentral,
  type TestCentral,
} from './support/central.js';
import { SimDevice } from './support/sim-device.js';

let central: TestCentral;
beforeAll(async () => {
  central = await startTestCentral();
});
afterAll(async () => {
  await central.stop();
});

const get = (path: string, headers: Record<string, string> = {}) => fetch(central.url(path), { headers });

const refresh = (token: string): Promise<Response> =>
  centralTokenRequest(central, { grant_type: 'refresh_token', refresh_token: token });

test('centrala gets a token in the box token shape; a wrong password and anonymous are invalid_grant', async () => {
  const res = await hqTokenRequest(central, 'centrala', 'centrala-demo-1');
  expect(res.status).toBe(200);
  const body = (await res.json()) as any;
  expect(body).toMatchObject({
    token_type: 'bearer',
    scope: 'read write',
    TENANT: CENTRAL_DEMO.tenant,
    expires_in: 3600,
  });
  expect(body.UUID).toMatch(/^[0-9a-f-]{36}$/);
  const wrong = await hqTokenRequest(central, 'centrala', 'nope');
  expect(wrong.status).toBe(400);
  expect(await wrong.json()).toMatchObject({ error: 'invalid_grant' });
  expect(await (await hqTokenRequest(central, 'anonymous', '')).json()).toMatchObject({ error: 'invalid_grant' });
  // The box's staff users are not headquarters users.
  expect((await hqTokenRequest(central, 'kelner', 'kelner-demo-1')).status).toBe(400);
});

test('a refresh token rotates; reusing a spent one revokes its family', async () => {
  const first = (await (await hqTokenRequest(central, 'centrala', 'centrala-demo-1')).json()) as any;
  const second = await refresh(first.refresh_token);
  expect(second.status).toBe(200);
  const next = (await second.json()) as any;
  expect((await refresh(first.refresh_token)).status).toBe(400);
  expect(await (await refresh(next.refresh_token)).json()).toMatchObject({ error: 'invalid_grant' });
});

test('HQ routes need a central token of the tenant', async () => {
  expect((await get('/hq-api/api/orders')).status).toBe(401);
  expect((await get('/hq-api/api/devices', { authorization: 'Bearer nonsense' })).status).toBe(401);
  const token = await central.hqToken();
  const other = await get('/hq-api/api/devices', {
    authorization: `Bearer ${token}`,
    'x-tenant': '00000000-0000-4000-8000-000000000000',
  });
  expect(other.status).toBe(403);
  expect((await get('/hq-api/api/devices', { authorization: `Bearer ${token}` })).status).toBe(200);
});

test('orders page newest first by created with an opaque cursor; bad cursor, limit or ids answer 400/404', async () => {
  const d = new SimDevice(central.url(''));
  expect((await d.enrol(await central.enrolCode(CENTRAL_DEMO.venues[2]!))).status).toBe(201);
  const t0 = Date.parse('2026-01-01T10:00:00.000Z');
  for (let i = 0; i < 7; i++)
    d.order(undefined, 1, i % 2 ? 'NEW' : 'COMPLETED', new Date(t0 + i * 60_000).toISOString());
  expect((await d.send(1, 7)).status).toBe(200);
  const venue = CENTRAL_DEMO.venues[2]!;
  const seen: string[] = [];
  let after: string | null = null;
  do {
    const page: any = await central.hq(`/hq-api/api/orders?venueId=${venue}&limit=3${after ? `&after=${after}` : ''}`);
    seen.push(...page.items.map((o: any) => o.created));
    after = page.next;
  } while (after);
  expect(seen).toEqual(Array.from({ length: 7 }, (_, i) => new Date(t0 + (6 - i) * 60_000).toISOString()));
  const completed = await central.hq(`/hq-api/api/orders?venueId=${venue}&status=COMPLETED`);
  expect(completed.items).toHaveLength(4);
  const token = await central.hqToken();
  const auth = { authorization: `Bearer ${token}` };
  for (const bad of ['after=garbage', 'after=WyJ4IiwieSJd', 'limit=0', 'limit=201', 'limit=x']) {
    const res = await get(`/hq-api/api/orders?${bad}`, auth);
    expect(res.status, bad).toBe(400);
    expect(((await res.json()) as any).codes[0].code).toBe('invalidField');
  }
  expect((await get('/hq-api/api/orders/nope', auth)).status).toBe(404);
  expect((await get('/hq-api/api/orders/nope/versions', auth)).status).toBe(404);
  expect((await get('/hq-api/api/stock?warehouseId=nope', auth)).status).toBe(404);
  expect((await get('/hq-api/api/stock', auth)).status).toBe(400);
  const stock = await central.hq(`/hq-api/api/stock?warehouseId=${CENTRAL_DEMO.warehouses[2]}`);
  expect(stock).toEqual({ warehouse: CENTRAL_DEMO.warehouses[2], items: [] });
});
