import { type Static, Type } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { newId } from '../../../shared/ids.js';
import { ProvisioningError } from '../../../shared/errors.js';
import { hashSecret, verifySecret } from '../../../shared/passwords.js';
import { inTransaction, type Pool } from '../../db/pool.js';
import { createTenantRepo } from './repo.js';

/** The provisioning file's shape as the central reads it (native-config/demo.json); menus are not read yet. */
const Provisioning = Type.Object({
  tenants: Type.Array(
    Type.Object({
      id: Type.String({ minLength: 1, maxLength: 64 }),
      name: Type.String({ minLength: 1 }),
      clients: Type.Array(
        Type.Object({ clientId: Type.String({ minLength: 1 }), clientSecret: Type.String({ minLength: 8 }) }),
      ),
      users: Type.Array(
        Type.Object({
          username: Type.String({ minLength: 1, pattern: '^(?!anonymous$)' }),
          password: Type.String({ minLength: 8 }),
          scope: Type.String({ pattern: '^read( write)?$' }),
        }),
      ),
      venues: Type.Array(
        Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }), name: Type.String({ minLength: 1 }) }),
      ),
      warehouses: Type.Array(
        Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }), name: Type.String({ minLength: 1 }) }),
      ),
    }),
  ),
});
type Provisioning = Static<typeof Provisioning>;
const check = TypeCompiler.Compile(Provisioning);

/** Headquarters' demo login, added to the demo tenant by `central serve --demo`. */
/** The demo's headquarters users: one who runs the chain, and one who may only look (the console's read-only view). */
export const DEMO_HQ_USERS = [
  { username: 'centrala', password: 'centrala-demo-1', scope: 'read write' },
  { username: 'analityk', password: 'analityk-demo-1', scope: 'read' },
];

export interface ProvisionOptions {
  /**
   * The demo file's `users` are the box's staff, not headquarters: with `demo` they are skipped and
   * DEMO_HQ_USERS are provisioned instead. A provisioning file's users are headquarters users.
   */
  demo?: boolean;
}

/** Applies a provisioning document idempotently (safe on every start): upserts, never deletes. */
export async function provision(pool: Pool, name: string, document: unknown, options: ProvisionOptions = {}) {
  if (!check.Check(document)) {
    const first = check.Errors(document).First();
    throw new ProvisioningError(`provisioning ${name}: ${first?.path || '/'} ${first?.message ?? 'is invalid'}`);
  }
  const doc: Provisioning = document;
  let tenants = 0;
  for (const t of doc.tenants) {
    const users = options.demo ? DEMO_HQ_USERS : t.users;
    // scrypt runs before the transaction so no connection waits on it.
    const repo0 = createTenantRepo(pool);
    const clients = await Promise.all(
      t.clients.map(async (c) => ({
        ...c,
        hash: await keepOrHash(c.clientSecret, await repo0.clientHash(t.id, c.clientId)),
      })),
    );
    const hqUsers = await Promise.all(
      users.map(async (u) => {
        const known = await repo0.hqUser(t.id, u.username);
        return { ...u, userId: known?.user_id ?? newId(), hash: await keepOrHash(u.password, known?.password_hash) };
      }),
    );
    await inTransaction(pool, async (client) => {
      const repo = createTenantRepo(client);
      await repo.upsertTenant(t.id, t.name);
      for (const c of clients) await repo.putClient(t.id, c.clientId, c.hash);
      for (const u of hqUsers)
        await repo.putHqUser(t.id, { username: u.username, userId: u.userId, passwordHash: u.hash, scope: u.scope });
      for (const v of t.venues) await repo.putVenue(t.id, v);
      for (const w of t.warehouses) await repo.putWarehouse(t.id, w);
    });
    tenants += 1;
  }
  return { tenants };
}

/** The stored hash when it still matches the secret (no churn on every start), else a new one. */
export async function keepOrHash(secret: string, stored: string | undefined): Promise<string> {
  if (stored && (await verifySecret(secret, stored))) return stored;
  return hashSecret(secret);
}
