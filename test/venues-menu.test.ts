import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import demo from '../native-config/demo.json';
import { DEMO, requestToken, startTestBox, type TestBox } from './support/box.js';
import { basicOf, expectApiError, TENANT_B, writeTenantB } from './support/fixtures.js';
import { contractsOf } from './support/contracts.js';

// One box with the demo tenant and tenant B (two venues on two menus, in Gdańsk).
let box: TestBox;
let token: string;
let tokenB: string;

beforeAll(async () => {
  box = await startTestBox({ config: { provisioningFile: writeTenantB() } });
  token = (await box.token()).access_token;
  const res = await requestToken(
    box,
    { grant_type: 'password', username: 'anonymous', password: '' },
    { 'x-tenant': TENANT_B.id, authorization: basicOf(TENANT_B.client) },
  );
  tokenB = ((await res.json()) as { access_token: string }).access_token;
});
afterAll(async () => {
  await box?.stop();
});

const [RYNEK, KAZIMIERZ, NOWA_HUTA] = DEMO.venues;
const nearest = (query: string, t = token) => box.get(`/venue-api/api/nearest?${query}`, t);
const menuPath = (menu: string, query: string) => `/menu-api/api/menu/${encodeURIComponent(menu)}?${query}`;
const menu = (query: string, menuId = DEMO.menu, t = token) => box.get(menuPath(menuId, query), t);

async function venuesAt(lat: number, lng: number): Promise<unknown[]> {
  const res = await nearest(`lat=${lat}&lng=${lng}`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  return (await (await contractsOf(box)).json('GET', '/venue-api/api/nearest', res)) as unknown[];
}

describe('nearest venues', () => {
  test('every venue is served exactly as provisioned (every field of Venue), closest first', async () => {
    // Next to the Rynek: Rynek (0 km), Kazimierz (~1.3 km), Nowa Huta (~7 km).
    expect(await venuesAt(50.0617, 19.9373)).toStrictEqual([RYNEK, KAZIMIERZ, NOWA_HUTA]);
  });

  test.each([
    ['Nowa Huta', 50.072, 20.037, [NOWA_HUTA, KAZIMIERZ, RYNEK]],
    ['Kazimierz', 50.0523, 19.9488, [KAZIMIERZ, RYNEK, NOWA_HUTA]],
    // West of the city the Rynek is closest and Nowa Huta farthest.
    ['Balice (west)', 50.0777, 19.7848, [RYNEK, KAZIMIERZ, NOWA_HUTA]],
    // South-east, nearer Kazimierz than the Rynek, yet Nowa Huta is still farthest by great circle.
    ['Podgórze (south)', 50.03, 19.96, [KAZIMIERZ, RYNEK, NOWA_HUTA]],
    // From Warsaw, far to the north-north-east: 249 km, 252 km, 253 km.
    ['Warsaw', 52.2297, 21.0122, [NOWA_HUTA, RYNEK, KAZIMIERZ]],
  ])('sorted by great-circle distance from %s', async (_name, lat, lng, expected) => {
    expect(await venuesAt(lat, lng)).toStrictEqual(expected);
  });

  test('the poles, the antimeridian and integer coordinates are valid points', async () => {
    for (const [lat, lng] of [
      [90, 180],
      [-90, -180],
      [0, 0],
      [-45.5, 179.999],
      [50, 20],
    ]) {
      expect(await venuesAt(lat!, lng!)).toHaveLength(3);
    }
  });

  test.each([
    ['lat is missing', 'lng=19.94', 'lat'],
    ['lng is missing', 'lat=50.06', 'lng'],
    ['both are missing', '', 'lat'],
    ['lat is empty', 'lat=&lng=19.94', 'lat'],
    ['lat is blank', 'lat=%20&lng=19.94', 'lat'],
    ['lat=abc', 'lat=abc&lng=19.94', 'lat'],
    ['lat=91', 'lat=91&lng=19.94', 'lat'],
    ['lat=-90.0001', 'lat=-90.0001&lng=19.94', 'lat'],
    ['lng=-181', 'lat=50.06&lng=-181', 'lng'],
    ['lng=180.5', 'lat=50.06&lng=180.5', 'lng'],
    ['lat=NaN', 'lat=NaN&lng=19.94', 'lat'],
    ['lat=Infinity', 'lat=Infinity&lng=19.94', 'lat'],
    ['lng=-Infinity', 'lat=50&lng=-Infinity', 'lng'],
    ['lat=1e400', 'lat=1e400&lng=19.94', 'lat'],
    ['lng=19,94 (decimal comma)', 'lat=50.06&lng=19,94', 'lng'],
    ['lat=0x10 (hex literal)', 'lat=0x10&lng=19.94', 'lat'],
  ])('400 invalidField when %s', async (_name, query, field) => {
    await expectApiError(await nearest(query), 400, 'invalidField', [field]);
  });

  test('tenant B sees only its own venues', async () => {
    const res = await nearest('lat=50.06&lng=19.94', tokenB);
    expect(res.status).toBe(200);
    expect(await res.json()).toStrictEqual(TENANT_B.venues);
    // and the demo tenant never sees B's venues, wherever it stands
    const fromGdansk = (await (await nearest('lat=54.35&lng=18.65')).json()) as { id: string }[];
    expect(fromGdansk.map((v) => v.id).sort()).toEqual(DEMO.venues.map((v) => v.id).sort());
  });
});

/** The demo menu as a channel must serve it: products restricted to other channels left out, `channels` dropped. */
type Node = { kind: string; id: string; items?: Node[]; channels?: string[]; [k: string]: unknown };
function expectedRoot(channel: string): Node {
  const visit = (node: Node): Node | undefined => {
    if (node.kind === 'svc/product') {
      if (node.channels && !node.channels.includes(channel)) return undefined;
      const { channels: _channels, ...served } = node;
      return served;
    }
    return { ...node, items: node.items!.map(visit).filter((n): n is Node => n !== undefined) };
  };
  return visit(structuredClone(demo.tenants[0]!.menus[0]!.root) as Node)!;
}

const productIds = (node: Node): string[] =>
  node.kind === 'svc/product' ? [node.id] : node.items!.flatMap(productIds);

describe('menu', () => {
  test.each([['DINE_IN'], ['TAKE_AWAY'], ['DELIVERY']])(
    '%s: the whole tree, every field, locks []',
    async (channel) => {
      const res = await menu(`channel=${channel}&instance=${DEMO.openVenue}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      const text = await res.text();
      expect(text).not.toContain('"channels"');
      const body = JSON.parse(text) as { root: Node; locks: unknown[] };
      expect(body).toStrictEqual({ root: expectedRoot(channel), locks: [] });
      expect(body.root).toMatchObject({
        kind: 'svc/group/category',
        id: 'rootcat',
        details: { literals: { name: 'Menu' } },
      });
      expect(body.root.items!.map((c) => c.id)).toEqual(['soups', 'mains', 'desserts', 'drinks']);
    },
  );

  test('every node has every field of the interface, with the right types', async () => {
    const res = await menu(`channel=DINE_IN&instance=${DEMO.openVenue}`);
    const body = (await (await contractsOf(box)).json('GET', '/menu-api/api/menu/{menu}', res)) as { root: Node };
    const check = (node: Node, parent: string | undefined): void => {
      if (node.kind === 'svc/group/category') {
        expect(Object.keys(node).sort()).toEqual(['details', 'id', 'items', 'kind']);
        expect(node.details).toStrictEqual({ literals: { name: expect.any(String) } });
        for (const n of node.items!) check(n, node.id);
        return;
      }
      expect(node).toStrictEqual({
        kind: 'svc/product',
        id: expect.stringMatching(/\S/),
        details: {
          literals: { name: expect.stringMatching(/\S/), description: expect.any(String) },
          media: expect.arrayContaining([{ url: expect.any(String), name: 'MAIN_IMG' }]),
        },
        price: expect.stringMatching(/^\d+\.\d{2}$/),
        minPrice: null,
        selCtx: expect.any(String),
        fltCtx: expect.any(String),
        _: { category: parent },
      });
      for (const m of (node.details as { media: unknown[] }).media) {
        expect(m).toStrictEqual({ url: expect.any(String), name: expect.stringMatching(/^(MAIN_IMG|DETAILS_IMG)$/) });
      }
    };
    check(body.root, undefined);
    expect(productIds(body.root)).toHaveLength(13);
  });

  test('products restricted to DINE_IN (ges, piwo) are served on DINE_IN only', async () => {
    const ids = async (channel: string) =>
      productIds(((await (await menu(`channel=${channel}&instance=${DEMO.openVenue}`)).json()) as { root: Node }).root);
    const dineIn = await ids('DINE_IN');
    expect(dineIn).toEqual(expect.arrayContaining(['ges', 'piwo', 'zurek', 'kompot']));
    for (const channel of ['TAKE_AWAY', 'DELIVERY']) {
      const other = await ids(channel);
      expect(other).not.toContain('ges');
      expect(other).not.toContain('piwo');
      expect(other).toEqual(dineIn.filter((id) => id !== 'ges' && id !== 'piwo'));
    }
  });

  test('every venue of the menu serves it, whatever its opening hours', async () => {
    for (const v of DEMO.venues) {
      expect((await menu(`channel=TAKE_AWAY&instance=${v.id}`)).status).toBe(200);
    }
  });

  test.each([
    ['missing', `instance=${DEMO.openVenue}`],
    ['empty', `channel=&instance=${DEMO.openVenue}`],
    ['DINE_IN_OPEN (an order type, not a channel)', `channel=DINE_IN_OPEN&instance=${DEMO.openVenue}`],
    ['foo', `channel=foo&instance=${DEMO.openVenue}`],
    ['lower case', `channel=dine_in&instance=${DEMO.openVenue}`],
    ['given twice, the first invalid', `channel=foo&channel=DINE_IN&instance=${DEMO.openVenue}`],
  ])('channel %s is 400 invalidField [channel]', async (_name, query) => {
    await expectApiError(await menu(query), 400, 'invalidField', ['channel']);
  });

  test.each([
    ['missing', 'channel=DINE_IN'],
    ['empty', 'channel=DINE_IN&instance='],
    ['not a UUID', 'channel=DINE_IN&instance=rynek'],
    ['a UUID with junk', `channel=DINE_IN&instance=${DEMO.openVenue}x`],
  ])('instance %s is 400 invalidField [instance]', async (_name, query) => {
    await expectApiError(await menu(query), 400, 'invalidField', ['instance']);
  });

  test('an unknown menu id is 404 notFound', async () => {
    await expectApiError(await menu(`channel=DINE_IN&instance=${DEMO.openVenue}`, 'no-such-menu'), 404, 'notFound');
    await expectApiError(await menu(`channel=DINE_IN&instance=${DEMO.openVenue}`, 'menu-krakow-2'), 404, 'notFound');
  });

  test('an unknown venue UUID is 404 notFound', async () => {
    await expectApiError(await menu('channel=DINE_IN&instance=6f1c2f43-5a3e-4c55-9d51-1f7b2f0c9aff'), 404, 'notFound');
  });

  test('a venue that uses another menu is 404 notFound', async () => {
    const [bar, grill] = TENANT_B.venues;
    const ok = await menu(`channel=DINE_IN&instance=${bar!.id}`, bar!.menu, tokenB);
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { root: Node }).root.items!.map((n) => n.id)).toEqual(['menu-b-bar-dish']);
    await expectApiError(await menu(`channel=DINE_IN&instance=${grill!.id}`, bar!.menu, tokenB), 404, 'notFound');
    await expectApiError(await menu(`channel=DINE_IN&instance=${bar!.id}`, grill!.menu, tokenB), 404, 'notFound');
  });

  test("another tenant's menu and venues are 404 (never 403), both ways", async () => {
    const [bar] = TENANT_B.venues;
    // B asks for the demo menu at a demo venue.
    await expectApiError(await menu(`channel=DINE_IN&instance=${DEMO.openVenue}`, DEMO.menu, tokenB), 404, 'notFound');
    // B asks for its own menu at a demo venue, and the demo menu at its own venue.
    await expectApiError(await menu(`channel=DINE_IN&instance=${DEMO.openVenue}`, bar!.menu, tokenB), 404, 'notFound');
    await expectApiError(await menu(`channel=DINE_IN&instance=${bar!.id}`, DEMO.menu, tokenB), 404, 'notFound');
    // The demo tenant asks for B's menu at B's venue.
    await expectApiError(await menu(`channel=DINE_IN&instance=${bar!.id}`, bar!.menu), 404, 'notFound');
  });

  test('menu and nearest need a bearer token', async () => {
    const path = menuPath(DEMO.menu, `channel=DINE_IN&instance=${DEMO.openVenue}`);
    await expectApiError(await box.get(path), 401, 'unauthorized');
    await expectApiError(await box.get('/venue-api/api/nearest?lat=50&lng=20'), 401, 'unauthorized');
  });
});
