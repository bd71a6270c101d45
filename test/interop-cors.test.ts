import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DEMO, startTestBox, type TestBox } from './support/box.js';
import { CHROMIUM_ARGS, SYSTEM_PACKAGES, skipWithout } from './support/system-packages.js';

// A kiosk web app served from another origin, in a real browser (Debian's Chromium, driven by playwright-core):
// it gets a token and places an order from the box when its origin is in http.corsOrigins, and the browser
// blocks it when not. docs/api.md "Browsers on another origin (CORS)".
const CHROMIUM = SYSTEM_PACKAGES.chromium;
const skip = skipWithout(import.meta.url, 'chromium');

/** A tiny web server for the kiosk page: one origin per port. */
async function pageServer(): Promise<{ server: Server; origin: string }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>kiosk</title><p>kiosk</p>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe.skipIf(skip)('CORS in Chromium', () => {
  let box: TestBox;
  let browser: BrowserContext;
  let allowed: { server: Server; origin: string };
  let other: { server: Server; origin: string };

  beforeAll(async () => {
    [allowed, other] = await Promise.all([pageServer(), pageServer()]);
    box = await startTestBox({ config: { http: { corsOrigins: [allowed.origin] } } });
    // A fresh profile (--user-data-dir, which playwright takes as this first argument) under the run's TMPDIR.
    browser = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'vb-chromium-')), {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await box?.stop();
    allowed?.server.close();
    other?.server.close();
  });

  /** In a page of `origin`: a token from the box, then a new order with an Idempotency-Key. */
  async function kioskFlow(origin: string) {
    const page = await browser.newPage();
    try {
      await page.goto(`${origin}/`);
      return await page.evaluate(
        async ({ base, tenant, client, secret, venue }) => {
          try {
            const tokenRes = await fetch(`${base}/auth-oauth2/oauth/token`, {
              method: 'POST',
              headers: {
                'content-type': 'application/x-www-form-urlencoded',
                'x-tenant': tenant,
                authorization: `Basic ${btoa(`${client}:${secret}`)}`,
              },
              body: 'grant_type=password&username=anonymous&password=',
            });
            const token = (await tokenRes.json()) as { access_token: string };
            const orderRes = await fetch(`${base}/ordering-api/api/order/new`, {
              method: 'POST',
              headers: {
                'content-type': 'application/json',
                authorization: `Bearer ${token.access_token}`,
                'Idempotency-Key': crypto.randomUUID(),
              },
              body: JSON.stringify({
                orderType: 'TAKE_AWAY',
                buckets: [{ venue, lines: [{ productId: 'zurek', quantity: 1 }] }],
              }),
            });
            return {
              ok: true,
              tokenStatus: tokenRes.status,
              orderStatus: orderRes.status,
              order: await orderRes.json(),
              requestId: orderRes.headers.get('x-request-id'),
            };
          } catch (err) {
            return { ok: false, error: String(err) };
          }
        },
        {
          base: box.url(''),
          tenant: DEMO.tenant,
          client: DEMO.client.clientId,
          secret: DEMO.client.clientSecret,
          venue: DEMO.openVenue,
        },
      );
    } finally {
      await page.close();
    }
  }

  test('a page of an allowed origin gets a token and places an order', async () => {
    const result = await kioskFlow(allowed.origin);
    expect(result).toMatchObject({
      ok: true,
      tokenStatus: 200,
      orderStatus: 200,
      order: { orderId: expect.any(String), lines: [expect.any(String)] },
    });
    // An exposed header is readable by the page.
    expect((result as { requestId: string }).requestId).toMatch(/^[0-9a-f-]{36}$/);
  });

  test('a page of another origin is blocked by the browser', async () => {
    expect(await kioskFlow(other.origin)).toEqual({ ok: false, error: 'TypeError: Failed to fetch' });
  });

  test('the preflight: methods, headers and max age for an allowed origin; nothing for another', async () => {
    const ask = (origin: string) =>
      fetch(box.url('/ordering-api/api/order/new'), {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization, content-type, idempotency-key',
        },
      });
    const yes = await ask(allowed.origin);
    expect(yes.status).toBe(204);
    expect(
      Object.fromEntries([...yes.headers].filter(([k]) => k.startsWith('access-control') || k === 'vary')),
    ).toEqual({
      'access-control-allow-origin': allowed.origin,
      // order/new is the command's path only (docs/api.md "The API"), not also an order id to GET.
      'access-control-allow-methods': 'POST, OPTIONS',
      'access-control-allow-headers': 'Authorization, Content-Type, Idempotency-Key, x-tenant, x-user',
      'access-control-max-age': '600',
      vary: 'Origin',
    });
    const no = await ask(other.origin);
    expect([...no.headers.keys()].filter((k) => k.startsWith('access-control'))).toEqual([]);
    // Plain answers too: marked for the allowed origin, unmarked for another and without Origin.
    const get = (origin?: string) =>
      fetch(box.url('/venue-api/api/nearest?lat=50&lng=20'), { headers: origin ? { origin } : {} });
    expect((await get(allowed.origin)).headers.get('access-control-allow-origin')).toBe(allowed.origin);
    expect((await get(other.origin)).headers.get('access-control-allow-origin')).toBeNull();
    expect((await get()).headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('without http.corsOrigins', () => {
  test('no answer carries CORS headers (the default: no other origin)', async () => {
    const box = await startTestBox();
    try {
      const res = await fetch(box.url('/ordering-api/api/order/new'), {
        method: 'OPTIONS',
        headers: { origin: 'http://127.0.0.1:1', 'access-control-request-method': 'POST' },
      });
      expect(res.status).toBe(204);
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
    } finally {
      await box.stop();
    }
  });
});
