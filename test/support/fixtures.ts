import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import demo from '../../native-config/demo.json';

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A second tenant ("B") for cross-tenant tests, provisioned beside the demo through `provisioningFile`.
 * Two clients (to test client binding of refresh tokens), a staff user named like the demo's (with another
 * password), and two venues on two different menus (to test "a venue of another menu").
 */
const demoVenue = demo.tenants[0]!.venues[0]!;
export const TENANT_B = {
  id: '9d7c3b1a-5e2f-4a60-8b1c-0000000b0001',
  client: { clientId: 'b-kiosk', clientSecret: 'b-kiosk-secret' },
  otherClient: { clientId: 'b-pos', clientSecret: 'b-pos-secret-2' },
  staff: { username: 'kelner', password: 'kelner-b-pass', scope: 'read write' },
  venues: [
    {
      ...demoVenue,
      id: '9d7c3b1a-5e2f-4a60-8b1c-0000000b0101',
      name: 'Gdańsk Bar',
      menu: 'menu-b-bar',
      address: { street: 'Długa', number: '1', postal: '80-827', city: 'Gdańsk', country: 'PL' },
      geoPosition: { lat: 54.3489, lng: 18.6529 },
      warehouse: '9d7c3b1a-5e2f-4a60-8b1c-0000000b0201',
    },
    {
      ...demoVenue,
      id: '9d7c3b1a-5e2f-4a60-8b1c-0000000b0102',
      name: 'Gdańsk Grill',
      menu: 'menu-b-grill',
      address: { street: 'Mariacka', number: '7', postal: '80-833', city: 'Gdańsk', country: 'PL' },
      geoPosition: { lat: 54.3497, lng: 18.6556 },
      warehouse: '9d7c3b1a-5e2f-4a60-8b1c-0000000b0202',
    },
  ],
  menus: ['menu-b-bar', 'menu-b-grill'].map((id) => ({
    id,
    root: {
      kind: 'svc/group/category',
      id: 'rootcat',
      details: { literals: { name: `Menu ${id}` } },
      items: [
        {
          kind: 'svc/product',
          id: `${id}-dish`,
          details: { literals: { name: 'Dish', description: 'of tenant B' }, media: [] },
          price: '10.00',
          minPrice: null,
          selCtx: '',
          fltCtx: '',
          _: { category: 'rootcat' },
        },
      ],
    },
  })),
  warehouses: [
    { id: '9d7c3b1a-5e2f-4a60-8b1c-0000000b0201', name: 'B bar' },
    { id: '9d7c3b1a-5e2f-4a60-8b1c-0000000b0202', name: 'B grill' },
  ],
};

/** Writes a provisioning file holding tenant B; pass it as config `{provisioningFile}` to startTestBox. */
export function writeTenantB(): string {
  const file = join(mkdtempSync(join(tmpdir(), 'vb-tenant-b-')), 'tenant-b.json');
  const { client, otherClient, staff, ...rest } = TENANT_B;
  const tenant = { ...rest, name: 'Tenant B', clients: [client, otherClient], users: [staff] };
  writeFileSync(file, JSON.stringify({ tenants: [tenant] }));
  return file;
}

export const basicOf = (c: { clientId: string; clientSecret: string }): string =>
  `Basic ${Buffer.from(`${c.clientId}:${c.clientSecret}`).toString('base64')}`;

/** Nothing a client can see should look like a stack trace, a source path or SQL. */
export function expectNoInternals(text: string): void {
  expect(text).not.toMatch(/\n\s+at |\.ts:\d|\.c?js:\d|node_modules|SQLITE|SELECT |Error: /);
}

/** The API's error shape (docs/api.md "Errors"): status, JSON content type, `{message, codes}` with one code. */
export async function expectApiError(
  res: Response,
  status: number,
  code: string,
  args?: string[],
): Promise<{ message: string; codes: { code: string; message: string; args: string[] }[] }> {
  const text = await res.text();
  expect({ status: res.status, body: text }).toMatchObject({ status });
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expectNoInternals(text);
  const body = JSON.parse(text) as Awaited<ReturnType<typeof expectApiError>>;
  expect(body).toStrictEqual({
    message: expect.any(String),
    codes: [{ code, message: expect.any(String), args: args ?? expect.any(Array) }],
  });
  expect(body.message.length).toBeGreaterThan(0);
  return body;
}

/** RFC 6749 section 5.2 error of the token endpoint. */
export async function expectOAuthError(res: Response, status: 400 | 401, error: string): Promise<void> {
  const text = await res.text();
  expect({ status: res.status, body: text }).toMatchObject({ status });
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expectNoInternals(text);
  expect(JSON.parse(text)).toStrictEqual({ error, error_description: expect.stringMatching(/\S/) });
  if (status === 401) expect(res.headers.get('www-authenticate')).toMatch(/^Basic\b/);
  else expect(res.headers.get('www-authenticate')).toBeNull();
}

/** Decodes a JWT's header and claims without verifying it. */
export function decodeJwt(token: string): { header: Record<string, unknown>; claims: Record<string, unknown> } {
  const [h, c] = token.split('.');
  return {
    header: JSON.parse(Buffer.from(h!, 'base64url').toString('utf8')) as Record<string, unknown>,
    claims: JSON.parse(Buffer.from(c!, 'base64url').toString('utf8')) as Record<string, unknown>,
  };
}
