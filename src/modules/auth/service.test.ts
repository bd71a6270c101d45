import Database from 'better-sqlite3';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import demo from '../../../native-config/demo.json';
import { migrate } from '../../db/migrate.js';
import { AppError } from '../../shared/errors.js';
import { createProvisioningRepo } from '../provisioning/repo.js';
import { applyProvisioning } from '../provisioning/service.js';
import { loadOrCreateKey } from '../../shared/jwt.js';
import { hashSecret } from '../../shared/passwords.js';
import { createAuthRepo } from './repo.js';
import { createAuthService } from './service.js';

const THROTTLE = {
  accountAtAddress: { burst: 5, refillSeconds: 10 },
  account: { burst: 100, refillSeconds: 2 },
  address: { burst: 20, refillSeconds: 1 },
  maxConcurrentHashes: 2,
  maxQueuedHashes: 16,
};
const ANONYMOUS = { perAddressPerMinute: 60, idleRefreshMs: 86_400_000 };

test('a remembered token is still refused once it expires', async () => {
  const db = new Database(':memory:');
  migrate(db);
  applyProvisioning(createProvisioningRepo(db), 'demo', demo);
  let now = Date.parse('2026-11-23T12:00:00Z');
  const auth = createAuthService(createAuthRepo(db), loadOrCreateKey(mkdtempSync(join(tmpdir(), 'vb-auth-'))), {
    accessTtlSeconds: 60,
    refreshTtlMs: 86_400_000,
    throttle: THROTTLE,
    anonymous: ANONYMOUS,
    now: () => now,
  });
  const tenant = demo.tenants[0]!;
  const { access_token: token } = await auth.token({
    tenantId: tenant.id,
    clientId: tenant.clients[0]!.clientId,
    clientSecret: tenant.clients[0]!.clientSecret,
    clientAddress: '127.0.0.1',
    form: new URLSearchParams({ grant_type: 'password', username: 'anonymous', password: '' }),
  });
  expect(auth.verify(token).tenantId).toBe(tenant.id);
  now += 59_000;
  expect(auth.verify(token).tenantId).toBe(tenant.id); // from the cache
  now += 1_000;
  expect(() => auth.verify(token)).toThrow(AppError);
  expect(() => auth.verify(`${token}x`)).toThrow(/bad signature|malformed/);
});

test('an access token lives expires_in seconds, give or take half a second, whatever the millisecond it was issued at', async () => {
  const db = new Database(':memory:');
  migrate(db);
  applyProvisioning(createProvisioningRepo(db), 'demo', demo);
  let now = 0;
  const auth = createAuthService(createAuthRepo(db), loadOrCreateKey(mkdtempSync(join(tmpdir(), 'vb-auth-'))), {
    accessTtlSeconds: 1,
    refreshTtlMs: 86_400_000,
    throttle: THROTTLE,
    anonymous: ANONYMOUS,
    now: () => now,
  });
  const tenant = demo.tenants[0]!;
  // Issued 1 ms before a second ends (a whole-second exp rounded down would expire it 1 ms later) and 1 ms after.
  for (const issuedAt of ['2026-11-23T12:00:00.999Z', '2026-11-23T12:00:00.001Z']) {
    now = Date.parse(issuedAt);
    const issued = await auth.token({
      tenantId: tenant.id,
      clientId: tenant.clients[0]!.clientId,
      clientSecret: tenant.clients[0]!.clientSecret,
      clientAddress: '127.0.0.1',
      form: new URLSearchParams({ grant_type: 'password', username: 'anonymous', password: '' }),
    });
    expect(issued.expires_in).toBe(1);
    now += 500;
    expect(auth.verify(issued.access_token).userId).toBe(issued.UUID);
    now += 1_000;
    expect(() => auth.verify(issued.access_token)).toThrow(AppError);
  }
});

test("reusing a refresh token revokes its family's access tokens until they expire, after a restart too", async () => {
  const db = new Database(':memory:');
  migrate(db);
  applyProvisioning(createProvisioningRepo(db), 'demo', demo);
  let now = Date.parse('2026-11-23T12:00:00Z');
  const key = loadOrCreateKey(mkdtempSync(join(tmpdir(), 'vb-auth-')));
  const options = {
    accessTtlSeconds: 60,
    refreshTtlMs: 86_400_000,
    throttle: THROTTLE,
    anonymous: ANONYMOUS,
    now: () => now,
  };
  const auth = createAuthService(createAuthRepo(db), key, options);
  const {
    id: tenantId,
    clients: [client],
  } = demo.tenants[0]!;
  const grant = (form: Record<string, string>) =>
    auth.token({ tenantId, ...client!, clientAddress: '127.0.0.1', form: new URLSearchParams(form) });
  const anonymous = { grant_type: 'password', username: 'anonymous', password: '' };
  const first = await grant(anonymous);
  const second = await grant({ grant_type: 'refresh_token', refresh_token: first.refresh_token });
  const other = await grant(anonymous);
  await expect(grant({ grant_type: 'refresh_token', refresh_token: first.refresh_token })).rejects.toMatchObject({
    error: 'invalid_grant',
  });

  for (const t of [first, second]) expect(() => auth.verify(t.access_token)).toThrow(/token revoked/);
  expect(auth.verify(other.access_token).userId).toBe(other.UUID);
  // A restarted box reads the list back from SQLite.
  const restarted = createAuthService(createAuthRepo(db), key, options);
  expect(() => restarted.verify(second.access_token)).toThrow(/token revoked/);
  expect(restarted.sweepExpired(() => true)).toEqual({ refreshTokens: 0, idleAnonymous: 0, revocations: 0 });
  // Pruned once the tokens have expired, when the signature check refuses them anyway.
  now += 60_000;
  expect(restarted.sweepExpired(() => true)).toEqual({ refreshTokens: 0, idleAnonymous: 0, revocations: 2 });
  expect(() => restarted.verify(second.access_token)).toThrow(/token expired/);
});

test('a retried refresh within the grace gets the identical pair, and no secret of it is stored; past the grace it is reuse', async () => {
  const db = new Database(':memory:');
  migrate(db);
  applyProvisioning(createProvisioningRepo(db), 'demo', demo);
  let now = Date.parse('2026-11-23T12:00:00.700Z');
  const key = loadOrCreateKey(mkdtempSync(join(tmpdir(), 'vb-auth-')));
  const auth = createAuthService(createAuthRepo(db), key, {
    accessTtlSeconds: 60,
    refreshTtlMs: 86_400_000,
    throttle: THROTTLE,
    anonymous: ANONYMOUS,
    refreshRetryGraceMs: 30_000,
    now: () => now,
  });
  const {
    id: tenantId,
    clients: [client],
  } = demo.tenants[0]!;
  const grant = (form: Record<string, string>) =>
    auth.token({ tenantId, ...client!, clientAddress: '127.0.0.1', form: new URLSearchParams(form) });
  const first = await grant({ grant_type: 'password', username: 'anonymous', password: '' });
  const second = await grant({ grant_type: 'refresh_token', refresh_token: first.refresh_token });
  now += 29_000;
  expect(JSON.stringify(await grant({ grant_type: 'refresh_token', refresh_token: first.refresh_token }))).toBe(
    JSON.stringify(second),
  );
  // The database holds hashes and claims only: neither token of the pair appears in it.
  const dump = JSON.stringify(db.prepare('SELECT * FROM refresh_tokens').all());
  expect(dump).not.toContain(second.refresh_token);
  expect(dump).not.toContain(second.access_token.split('.')[2]);
  now += 2_000;
  await expect(grant({ grant_type: 'refresh_token', refresh_token: first.refresh_token })).rejects.toMatchObject({
    error: 'invalid_grant',
  });
  expect(() => auth.verify(second.access_token)).toThrow(/token revoked/);
});

test('a token is answered only once what its grant wrote is on the disk', async () => {
  const db = new Database(':memory:');
  migrate(db);
  applyProvisioning(createProvisioningRepo(db), 'demo', demo);
  let synced: () => void = () => undefined;
  const transactions: string[] = [];
  const auth = createAuthService(createAuthRepo(db), loadOrCreateKey(mkdtempSync(join(tmpdir(), 'vb-auth-'))), {
    accessTtlSeconds: 60,
    refreshTtlMs: 86_400_000,
    throttle: THROTTLE,
    anonymous: ANONYMOUS,
    now: () => Date.now(),
    durable: {
      transaction: (fn) => {
        transactions.push('relaxed');
        return db.transaction(fn).immediate();
      },
      synced: () =>
        new Promise((resolve) => {
          synced = resolve;
        }),
    },
  });
  const tenant = demo.tenants[0]!;
  let answered = false;
  const answer = auth
    .token({
      tenantId: tenant.id,
      clientId: tenant.clients[0]!.clientId,
      clientSecret: tenant.clients[0]!.clientSecret,
      clientAddress: '127.0.0.1',
      form: new URLSearchParams({ grant_type: 'password', username: 'anonymous', password: '' }),
    })
    .then((t) => {
      answered = true;
      return t;
    });
  // The client's secret is checked with scrypt on the thread pool first.
  for (let i = 0; i < 200 && transactions.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
  await new Promise((r) => setTimeout(r, 20));
  expect(transactions).toEqual(['relaxed']);
  expect(db.prepare('SELECT COUNT(*) FROM refresh_tokens').pluck().get()).toBe(1);
  expect(answered).toBe(false);
  synced();
  expect((await answer).access_token).toBeTruthy();
});

test('every revocation tells its listeners, with why: family reused, user retired, client revoked', async () => {
  const db = new Database(':memory:');
  migrate(db);
  applyProvisioning(createProvisioningRepo(db), 'demo', demo);
  const tenant = demo.tenants[0]!;
  const kiosk = { clientId: 'kiosk-two', clientSecret: 'kiosk-two-secret' };
  createProvisioningRepo(db).upsertClient(tenant.id, kiosk.clientId, hashSecret(kiosk.clientSecret));
  const auth = createAuthService(createAuthRepo(db), loadOrCreateKey(mkdtempSync(join(tmpdir(), 'vb-auth-'))), {
    accessTtlSeconds: 60,
    refreshTtlMs: 86_400_000,
    throttle: THROTTLE,
    anonymous: ANONYMOUS,
    now: () => Date.parse('2026-11-23T12:00:00Z'),
  });
  const heard: { jti: string; reason: string }[][] = [];
  auth.onRevoked((rows) => heard.push(rows.map((r) => ({ jti: r.jti, reason: r.reason }))));
  const grant = (form: Record<string, string>, client: { clientId: string; clientSecret: string }) =>
    auth.token({ tenantId: tenant.id, ...client, clientAddress: '127.0.0.1', form: new URLSearchParams(form) });
  const staff = { grant_type: 'password', username: 'kelner', password: 'kelner-demo-1' };
  const demoClient = tenant.clients[0]!;
  const reused = await grant({ grant_type: 'password', username: 'anonymous', password: '' }, demoClient);
  const viaKiosk = await grant(staff, kiosk);
  const kelner = await grant(staff, demoClient);
  const kuchnia = await grant({ grant_type: 'password', username: 'kuchnia', password: 'kuchnia-demo-1' }, demoClient);
  const principal = (t: { access_token: string }) => auth.verify(t.access_token);
  const standing = [reused, viaKiosk, kelner, kuchnia].map(principal);
  for (const p of standing) expect(auth.revokedReason(p)).toBeUndefined();

  await grant({ grant_type: 'refresh_token', refresh_token: reused.refresh_token }, demoClient);
  await expect(
    grant({ grant_type: 'refresh_token', refresh_token: reused.refresh_token }, demoClient),
  ).rejects.toMatchObject({ error: 'invalid_grant' });
  expect(heard.at(-1)).toContainEqual({ jti: reused.jti, reason: 'token revoked' });

  // Headquarters retires a user and a client (src/modules/sync/catalogue/apply.ts): revoked in the transaction,
  // noted after it.
  auth.noteRevoked(auth.revokeUserTokens(tenant.id, kuchnia.UUID));
  expect(heard.at(-1)).toEqual([{ jti: kuchnia.jti, reason: 'user retired' }]);
  db.prepare('DELETE FROM oauth_clients WHERE tenant_id = ? AND client_id = ?').run(tenant.id, kiosk.clientId);
  auth.noteRevoked(auth.revokeGoneClientTokens(tenant.id));
  expect(heard.at(-1)).toEqual([{ jti: viaKiosk.jti, reason: 'client revoked' }]);
  // Nothing more to revoke: no listener call for an empty batch.
  auth.noteRevoked(auth.revokeGoneClientTokens(tenant.id));
  expect(heard).toHaveLength(3);

  expect(standing.map((p) => auth.revokedReason(p))).toEqual([
    'token revoked',
    'client revoked',
    undefined,
    'user retired',
  ]);
  expect(() => principal(viaKiosk)).toThrow(/token revoked/);
});
