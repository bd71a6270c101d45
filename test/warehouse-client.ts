import demo from '../native-config/demo.json';
import { DEMO, requestToken, type TestBox } from './support/box.js';
import { runCli } from './support/cli.js';
import { contractsOf } from './support/contracts.js';

/** Helpers for the warehouse integration tests: staff tokens with their headers, and calls by method. */

export const WAREHOUSES = demo.tenants[0]!.warehouses.map((w) => w.id);
export const W1 = WAREHOUSES[0]!;
export const W2 = WAREHOUSES[1]!;
export const BASE = '/warehouse-api/api/warehouse';
export const wpath = (warehouse: string, rest = ''): string => `${BASE}/${warehouse}${rest}`;

export interface Staff {
  token: string;
  userId: string;
  tenantId: string;
  /** authorization, x-tenant and x-user as a warehouse client sends them. */
  headers: Record<string, string>;
}

export async function staff(box: TestBox, username = 'kelner', password = 'kelner-demo-1'): Promise<Staff> {
  const t = await box.token(username, password);
  return asStaff(t.access_token, t.UUID, t.TENANT);
}

export const asStaff = (token: string, userId: string, tenantId: string): Staff => ({
  token,
  userId,
  tenantId,
  headers: { authorization: `Bearer ${token}`, 'x-tenant': tenantId, 'x-user': userId },
});

/** A token of another tenant, provisioned by `otherTenantProvisioning`. */
export async function otherStaff(box: TestBox): Promise<Staff> {
  const basic = `Basic ${Buffer.from(`${OTHER.client}:${OTHER.secret}`).toString('base64')}`;
  const res = await requestToken(
    box,
    { grant_type: 'password', username: 'szef', password: OTHER.password },
    { 'x-tenant': OTHER.tenant, authorization: basic },
  );
  const t = (await res.json()) as { access_token: string; UUID: string; TENANT: string };
  return asStaff(t.access_token, t.UUID, t.TENANT);
}

export const OTHER = {
  tenant: '7e1a0000-0000-4000-8000-000000000002',
  client: 'other-kiosk',
  secret: 'other-secret-1',
  password: 'szef-password-1',
  warehouse: '7e1a0000-0000-4000-8000-0000000000b1',
};

/** A provisioning document with a second tenant, for the cross-tenant checks. */
export const otherTenantProvisioning = {
  tenants: [
    {
      id: OTHER.tenant,
      name: 'Other',
      clients: [{ clientId: OTHER.client, clientSecret: OTHER.secret }],
      users: [{ username: 'szef', password: OTHER.password, scope: 'read write' }],
      venues: [],
      menus: [],
      warehouses: [{ id: OTHER.warehouse, name: 'Other store' }],
    },
  ],
};

export async function call(
  box: TestBox,
  who: Staff | undefined,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any }> {
  const res = await fetch(box.url(path), {
    method,
    headers: {
      ...(who?.headers ?? { 'x-tenant': DEMO.tenant }),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  const parsed = text === '' ? undefined : JSON.parse(text);
  // Every answer a warehouse test sees is also checked against /openapi.json (test/support/contracts.ts).
  if (parsed !== undefined && path.startsWith('/warehouse-api/'))
    (await contractsOf(box)).matching(method, path, res.status, parsed);
  return { status: res.status, body: parsed };
}

export const item = (id: string, qty: number, unit = 'kg', more: Record<string, unknown> = {}) => ({
  id,
  unit,
  qty,
  ...more,
});

/** The codes of an error body as [code, ...args] tuples. */
export const codes = (body: { codes?: { code: string; args: string[] }[] }): string[][] =>
  (body.codes ?? []).map((c) => [c.code, ...c.args]);

/** Runs `venue-box stock check|rebuild` on a data directory (the bundled CLI, as an operator would). */
export const stockCli = (dataDir: string, action: string) => runCli(['stock', action, '--data-dir', dataDir]);
