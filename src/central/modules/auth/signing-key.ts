import type { Logger } from '../../../log.js';
import { newSigningKey, readKeyFile, type SigningKey, signingKeyFromSecret } from '../../../shared/jwt.js';
import { inTransaction, type Pool } from '../../db/pool.js';
import { createAuthRepo } from './repo.js';

// Any constant: central processes starting at once on one database make one key between them.
const SIGNING_KEY_LOCK = 0x7e_57_ce_02;

/**
 * The token signing key every central process on this database shares (docs/sync.md "Running it"). The first
 * process to start makes it; a central that kept its key in its data directory (older versions did) moves that
 * one into the database, so the tokens it issued stay valid across the upgrade.
 */
export async function loadSigningKey(pool: Pool, dataDir: string, log: Logger): Promise<SigningKey> {
  return inTransaction(pool, async (client) => {
    const repo = createAuthRepo(client);
    await repo.lockTransaction(SIGNING_KEY_LOCK);
    const stored = await repo.newestSigningKey();
    if (stored) return signingKeyFromSecret(stored.kid, stored.secretKey);
    const fromFile = readKeyFile(dataDir);
    const key = fromFile ?? newSigningKey();
    await repo.insertSigningKey(key.kid, key.secretKey);
    log.info(
      { kid: key.kid, from: fromFile ? 'the data directory' : 'new' },
      'token signing key stored in the database',
    );
    return key;
  });
}
