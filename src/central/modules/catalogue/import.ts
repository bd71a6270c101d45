import {
  type Provisioning,
  Provisioning as ProvisioningSchema,
  referenceProblems,
  staffUserId,
} from '../../../shared/catalogue-schemas.js';
import { compile } from '../../../shared/validate.js';
import type { Pool } from '../../db/pool.js';
import { ProvisioningError } from '../../../shared/errors.js';
import { keepOrHash } from '../tenants/provision.js';
import { createCatalogueRepo } from './repo.js';
import { anyChanged, changeCatalogue } from './writer.js';

const validate = compile(ProvisioningSchema);

export interface ImportOptions {
  /** Skip a tenant whose catalogue was written before (`serve --demo`: a restart keeps headquarters' changes). */
  onlyNew?: boolean;
}

/**
 * `venue-box central import FILE` (and `serve --demo`): a provisioning file (native-config/demo.json's shape,
 * validated as the box validates it) into the catalogue, one transaction and one rev per tenant. Upserts only:
 * rows the file does not name stay; rows that do not differ keep their rev, so importing twice changes nothing.
 * The file's users are the boxes' staff users (their passwords stored as scrypt hashes).
 */
export async function importCatalogue(pool: Pool, name: string, document: unknown, options: ImportOptions = {}) {
  let doc: Provisioning;
  try {
    doc = validate(document);
  } catch (err) {
    const codes = (err as { codes?: { message: string }[] }).codes ?? [{ message: String(err) }];
    throw new ProvisioningError(`${name} is invalid: ${codes.map((c) => c.message).join('; ')}`);
  }
  for (const [i, t] of doc.tenants.entries()) {
    const problem = referenceProblems(t)[0];
    if (problem) throw new ProvisioningError(`${name}: /tenants/${i}${problem.pointer}: ${problem.message}`);
  }
  const results: { tenant: string; rev: number; changed: boolean; skipped?: boolean }[] = [];
  for (const t of doc.tenants) {
    const read = createCatalogueRepo(pool);
    if (options.onlyNew && (await read.position(t.id)).rev > 0) {
      results.push({ tenant: t.id, rev: (await read.position(t.id)).rev, changed: false, skipped: true });
      continue;
    }
    // scrypt before the transaction, so no connection waits on it; a secret that still matches keeps its hash.
    const clients = await Promise.all(
      t.clients.map(async (c) => ({
        clientId: c.clientId,
        hash: await keepOrHash(
          c.clientSecret,
          (await read.live('client', t.id, c.clientId))?.secretHash as string | undefined,
        ),
      })),
    );
    const users = await Promise.all(
      t.users.map(async (u) => {
        const id = staffUserId(t.id, u.username);
        const known = (await read.live('user', t.id, id))?.passwordHash as string | undefined;
        return { id, username: u.username, scope: u.scope, passwordHash: await keepOrHash(u.password, known) };
      }),
    );
    await pool.query('INSERT INTO tenants (tenant_id, name) VALUES ($1, $2) ON CONFLICT (tenant_id) DO NOTHING', [
      t.id,
      t.name,
    ]);
    const result = await changeCatalogue(pool, t.id, (repo, rev) =>
      anyChanged([
        () => repo.tenant(t.id, t.name, rev),
        ...clients.map((c) => () => repo.client(t.id, c.clientId, c.hash, rev)),
        ...users.map((u) => () => repo.user(t.id, u, rev)),
        ...t.warehouses.map((w) => () => repo.warehouse(t.id, w, rev)),
        ...t.menus.map((m) => () => repo.menu(t.id, m.id, m.root, rev)),
        ...t.venues.map((v) => () => repo.venue(t.id, v, rev)),
      ]),
    );
    results.push({ tenant: t.id, ...result });
  }
  return results;
}
