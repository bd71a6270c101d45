import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DEMO, startTestBox, type TestBox } from './support/box.js';

// The screens' static files and bootstrap over plain HTTP (README "Screens"); the browser side is
// test/screens.test.ts.
describe('the screens over HTTP', () => {
  let box: TestBox;
  let bare: TestBox | undefined;
  beforeAll(async () => {
    box = await startTestBox();
  });
  afterAll(async () => {
    await box?.stop();
    await bare?.stop();
  });

  async function assetPaths(): Promise<string[]> {
    const html = await (await box.get('/')).text();
    return [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]!);
  }

  test("index.html at / and at the app's pages, revalidated on every load", async () => {
    for (const path of [
      '/',
      '/kitchen',
      '/pickup',
      '/tabs',
      '/orders',
      '/manager',
      '/kiosk',
      `/kiosk?venue=${DEMO.openVenue}`,
    ]) {
      const res = await box.get(path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('cache-control')).toBe('no-cache');
      expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
      expect(await res.text()).toContain('<div id="app">');
    }
  });

  test('hashed assets: their content type, cached for a year, gzipped when asked, HEAD with the same headers', async () => {
    const assets = await assetPaths();
    expect(assets.some((a) => /^\/assets\/main-[A-Z0-9]{8}\.js$/.test(a))).toBe(true);
    expect(assets.some((a) => /^\/assets\/main-[A-Z0-9]{8}\.css$/.test(a))).toBe(true);
    for (const path of assets) {
      const plain = await fetch(box.url(path), { headers: { 'accept-encoding': 'identity' } });
      expect(plain.status).toBe(200);
      expect(plain.headers.get('content-type')).toBe(
        path.endsWith('.js') ? 'text/javascript; charset=utf-8' : 'text/css; charset=utf-8',
      );
      expect(plain.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(plain.headers.get('content-encoding')).toBeNull();
      const body = await plain.arrayBuffer();
      // fetch() asks for gzip by itself and unpacks it: the same bytes.
      const gz = await fetch(box.url(path));
      expect(gz.headers.get('content-encoding')).toBe('gzip');
      expect(Buffer.from(await gz.arrayBuffer()).equals(Buffer.from(body))).toBe(true);
      const head = await fetch(box.url(path), { method: 'HEAD', headers: { 'accept-encoding': 'identity' } });
      expect(head.status).toBe(200);
      expect(head.headers.get('content-length')).toBe(String(body.byteLength));
      expect(head.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(await head.text()).toBe('');
    }
  });

  test("no API path is shadowed: unknown paths and assets stay the API's 404, a wrong method a 405", async () => {
    for (const path of [
      '/nope',
      '/assets/missing.js',
      '/kitchen/extra',
      '/media/zurek.jpg',
      '/ordering-api/api/order/x/y',
    ]) {
      const res = await box.get(path);
      expect(res.status, path).toBe(404);
      expect(((await res.json()) as { codes: { code: string }[] }).codes[0]!.code).toBe('notFound');
    }
    const post = await box.post('/kiosk', undefined, {});
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    // The API still answers as before (a route mounted next to the files).
    expect((await box.get(`/venue-api/api/nearest?lat=50&lng=19`)).status).toBe(401);
  });

  test("GET /screens-api/bootstrap: the demo's tenant, client, language, currency and venue", async () => {
    const res = await box.get('/screens-api/bootstrap');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      tenant: DEMO.tenant,
      clientId: DEMO.client.clientId,
      clientSecret: DEMO.client.clientSecret,
      language: 'pl',
      currency: 'PLN',
      venue: DEMO.openVenue,
    });
  });

  test('a box without provisioning has no bootstrap (404 with a message); screens.enabled false serves no page', async () => {
    bare = await startTestBox({ demo: false, config: { screens: { language: 'en' } } });
    const res = await bare.get('/screens-api/bootstrap');
    expect(res.status).toBe(404);
    expect(((await res.json()) as { message: string }).message).toContain('screens.tenant');
    expect((await bare.get('/')).status).toBe(200); // the app itself loads, and shows that message
    await bare.stop();
    bare = await startTestBox({ config: { screens: { enabled: false } } });
    const root = await bare.get('/');
    expect(root.status).toBe(404);
    expect(((await root.json()) as { codes: { code: string }[] }).codes[0]!.code).toBe('notFound');
    expect((await bare.get('/screens-api/bootstrap')).status).toBe(404);
    expect((await bare.get('/kitchen')).status).toBe(404);
  });

  test('config: screens values override the provisioning; a bad language or currency stops the box', async () => {
    await bare?.stop();
    bare = await startTestBox({
      config: {
        screens: { language: 'en', currency: 'EUR', venue: DEMO.venues[1]!.id, clientId: 'other', clientSecret: 's' },
      },
    });
    expect(await (await bare.get('/screens-api/bootstrap')).json()).toEqual({
      tenant: DEMO.tenant,
      clientId: 'other',
      clientSecret: 's',
      language: 'en',
      currency: 'EUR',
      venue: DEMO.venues[1]!.id,
    });
    await bare.stop();
    bare = undefined;
    await expect(startTestBox({ config: { screens: { language: 'de' } } })).rejects.toThrow(/screens\/language/);
    await expect(startTestBox({ config: { screens: { currency: 'zł' } } })).rejects.toThrow(/screens\/currency/);
  });
});
