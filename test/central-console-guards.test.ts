import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CENTRAL_DEMO, centralTokenRequest, startTestCentral, type TestCentral } from './support/central.js';
import { expectApiError } from './support/fixtures.js';

// What a hostile or careless client of the HQ API meets (docs/sync.md "The headquarters console"): a NUL character
// anywhere is a 400 naming where (PostgreSQL cannot store one), a `read` user never sees a password or secret hash,
// and the console's own client id cannot be taken by a boxes' client.
let central: TestCentral;
let token: string;
const WAREHOUSE = CENTRAL_DEMO.warehouses[0]!;

beforeAll(async () => {
  central = await startTestCentral();
  token = await central.hqToken();
}, 60_000);
afterAll(async () => {
  await central?.stop();
});

function hq(method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(central.url(`/hq-api/api${path}`), {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

describe('a NUL character', () => {
  test('in a query value, a path parameter or a JSON string is a 400 naming where it is; nothing written', async () => {
    const rev = async () => ((await (await hq('GET', '/catalogue')).json()) as { rev: number }).rev;
    const before = await rev();
    await expectApiError(await hq('GET', '/orders?q=ab%00cd'), 400, 'invalidField', ['q']);
    await expectApiError(await hq('GET', '/reports/sales?from=2026-11-01%00&to=2026-11-02'), 400, 'invalidField', [
      'from',
    ]);
    await expectApiError(await hq('GET', '/orders/x%00y'), 400, 'invalidField', ['id']);
    await expectApiError(await hq('PUT', `/warehouses/${WAREHOUSE}`, { name: 'Mag\u0000azyn' }), 400, 'invalidField', [
      '/name',
    ]);
    await expectApiError(
      await hq('PUT', '/staff-users/kelner%00x', { password: 'password-1', scope: 'read' }),
      400,
      'invalidField',
      ['username'],
    );
    expect(await rev()).toBe(before);
  });

  test('at the token endpoint is invalid_request (a name) or invalid_client (credentials), never a 500', async () => {
    const name = await centralTokenRequest(central, {
      grant_type: 'password',
      username: 'centr\u0000ala',
      password: 'x',
    });
    expect(name.status).toBe(400);
    expect(((await name.json()) as { error: string }).error).toBe('invalid_request');
    const client = await fetch(central.url('/auth-oauth2/oauth/token'), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-tenant': CENTRAL_DEMO.tenant },
      body: 'grant_type=password&username=centrala&password=x&client_id=hq%00console',
    });
    expect(client.status).toBe(400);
    const basic = await fetch(central.url('/auth-oauth2/oauth/token'), {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-tenant': CENTRAL_DEMO.tenant,
        authorization: `Basic ${Buffer.from('demo\u0000kiosk:secret').toString('base64')}`,
      },
      body: 'grant_type=password&username=centrala&password=x',
    });
    expect(basic.status).toBe(401);
    expect(((await basic.json()) as { error: string }).error).toBe('invalid_client');
    expect(central.logs.filter((l) => l.includes('"request failed"'))).toEqual([]);
  });
});

test("headquarters' catalogue carries no password or secret hash", async () => {
  const text = await (await hq('GET', '/catalogue')).text();
  const items = JSON.parse(text).items as { type: string; data?: Record<string, unknown> }[];
  expect(items.some((i) => i.type === 'user')).toBe(true);
  expect(items.some((i) => i.type === 'client')).toBe(true);
  for (const i of items) {
    expect(i.data ?? {}).not.toHaveProperty('passwordHash');
    expect(i.data ?? {}).not.toHaveProperty('secretHash');
  }
  expect(text).not.toMatch(/scrypt|\$s0\$|N=\d+/);
});

test("the console's client id cannot be made a boxes' client", async () => {
  await expectApiError(
    await hq('PUT', '/clients/hq-console', { clientSecret: 'a-long-secret-1' }),
    400,
    'invalidField',
    ['clientId'],
  );
});

test('enrolment codes: at most 50 live at once per tenant; one more is a 409 until some are used or expire', async () => {
  const venueId = CENTRAL_DEMO.venues[0]!;
  const made = await Promise.all(
    Array.from({ length: 50 }, () => hq('POST', '/enrol-codes', { venueId, ttlHours: 1 }).then((r) => r.status)),
  );
  expect(made.every((s) => s === 201)).toBe(true);
  await expectApiError(await hq('POST', '/enrol-codes', { venueId, ttlHours: 1 }), 409, 'conflict');
});
