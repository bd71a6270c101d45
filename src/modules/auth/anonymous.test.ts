import Database from 'better-sqlite3';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import demo from '../../../native-config/demo.json';
import { migrate } from '../../db/migrate.js';
import { loadOrCreateKey } from '../../shared/jwt.js';
import { createProvisioningRepo } from '../provisioning/repo.js';
import { applyProvisioning } from '../provisioning/service.js';
import { createAuthRepo } from './repo.js';
import { createAuthService } from './service.js';

const THROTTLE = {
  accountAtAddress: { burst: 5, refillSeconds: 10 },
  account: { burst: 100, refillSeconds: 2 },
  address: { burst: 20, refillSeconds: 1 },
  maxConcurrentHashes: 2,
  maxQueuedHashes: 16,
};
const HOUR = 3_600_000;

function setup(perAddressPerMinute = 60) {
  const db = new Database(':memory:');
  migrate(db);
  applyProvisioning(createProvisioningRepo(db), 'demo', demo);
  const clock = { now: Date.parse('2026-11-23T12:00:00Z') };
  const auth = createAuthService(createAuthRepo(db), loadOrCreateKey(mkdtempSync(join(tmpdir(), 'vb-anon-'))), {
    accessTtlSeconds: 3600,
    refreshTtlMs: 30 * 24 * HOUR,
    throttle: THROTTLE,
    anonymous: { perAddressPerMinute, idleRefreshMs: 24 * HOUR },
    now: () => clock.now,
  });
  const {
    id: tenantId,
    clients: [client],
  } = demo.tenants[0]!;
  const grant = (form: Record<string, string>, clientAddress = '10.0.0.1') =>
    auth.token({ tenantId, ...client!, clientAddress, form: new URLSearchParams(form) });
  const anonymous = (clientAddress?: string) =>
    grant({ grant_type: 'password', username: 'anonymous', password: '' }, clientAddress);
  const refresh = (token: string) => grant({ grant_type: 'refresh_token', refresh_token: token });
  return { auth, clock, grant, anonymous, refresh, db };
}

test('anonymous users with no order lose their refresh tokens after 24 idle hours; with an order, or staff, they keep them', async () => {
  const { auth, clock, grant, anonymous, refresh } = setup();
  const withOrder = await anonymous();
  const idle = await anonymous();
  let active = await anonymous();
  const staff = await grant({ grant_type: 'password', username: 'kelner', password: 'kelner-demo-1' });
  const hasOrder = (_tenantId: string, userId: string) => userId === withOrder.UUID;

  clock.now += 23 * HOUR;
  expect(auth.sweepExpired(hasOrder)).toMatchObject({ idleAnonymous: 0 });
  active = await refresh(active.refresh_token); // this family's newest token is now 23 h younger

  clock.now += 2 * HOUR;
  // Only `idle`'s family goes: `active` refreshed 2 h ago, `withOrder` has an order, kelner is staff.
  expect(auth.sweepExpired(hasOrder)).toMatchObject({ refreshTokens: 0, idleAnonymous: 1 });
  await expect(refresh(idle.refresh_token)).rejects.toMatchObject({ error: 'invalid_grant' });
  await expect(refresh(withOrder.refresh_token)).resolves.toMatchObject({ UUID: withOrder.UUID });
  await expect(refresh(active.refresh_token)).resolves.toMatchObject({ UUID: active.UUID });
  await expect(refresh(staff.refresh_token)).resolves.toMatchObject({ scope: 'read write' });
  expect(auth.sweepExpired(hasOrder)).toMatchObject({ idleAnonymous: 0 });
});

test('the sweep pages through many idle families', async () => {
  const { auth, clock, db } = setup();
  const repo = createAuthRepo(db);
  const tenantId = demo.tenants[0]!.id;
  // Rows as an anonymous grant writes them (signing 2,500 real tokens would take seconds).
  for (let i = 0; i < 2500; i++) {
    repo.insertRefresh({
      tokenHash: `hash-${i}`,
      tenantId,
      familyId: `family-${i}`,
      clientId: 'kiosk',
      userId: `user-${i}`,
      scope: 'read',
      staff: false,
      expiresMs: clock.now + 30 * 24 * HOUR,
      accessJti: `jti-${i}`,
      accessExpiresMs: clock.now + HOUR,
    });
  }
  clock.now += 25 * HOUR;
  expect(auth.sweepExpired(() => false)).toMatchObject({ idleAnonymous: 2500 });
  expect(db.prepare('SELECT COUNT(*) AS n FROM refresh_tokens').get()).toEqual({ n: 0 });
});

test('new anonymous tokens per address: a bucket of perAddressPerMinute, refilled per minute; other addresses unaffected', async () => {
  const { clock, anonymous, grant } = setup(3);
  for (let i = 0; i < 3; i++) await anonymous();
  // One token every 20 s: the next is 20 s away.
  await expect(anonymous()).rejects.toMatchObject({
    error: 'temporarily_unavailable',
    status: 429,
    retryAfterSeconds: 20,
  });
  await expect(anonymous('10.0.0.2')).resolves.toMatchObject({ scope: 'read' });
  await expect(grant({ grant_type: 'password', username: 'kelner', password: 'kelner-demo-1' })).resolves.toMatchObject(
    { scope: 'read write' },
  );
  clock.now += 20_000;
  await anonymous();
  await expect(anonymous()).rejects.toMatchObject({ error: 'temporarily_unavailable' });
});
