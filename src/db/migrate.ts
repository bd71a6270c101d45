import type { Db } from './open.js';
import { ProcessError } from '../shared/errors.js';
import { migration0001 } from './migrations/0001-initial.js';
import { migration0002 } from './migrations/0002-warehouse.js';
import { migration0003 } from './migrations/0003-order-lifecycle.js';
import { migration0004 } from './migrations/0004-sync.js';
import { migration0005 } from './migrations/0005-idempotency.js';
import { migration0006 } from './migrations/0006-token-revocations.js';
import { migration0007 } from './migrations/0007-line-notes.js';
import { migration0008 } from './migrations/0008-catalogue.js';
import { migration0009 } from './migrations/0009-open-order-users.js';
import { migration0010 } from './migrations/0010-events-without-age-index.js';
import { migration0011 } from './migrations/0011-order-documents.js';
import { migration0012 } from './migrations/0012-fewer-index-pages.js';
import { migration0013 } from './migrations/0013-print-sending.js';

export interface Migration {
  version: number;
  name: string;
  up: string;
}

/** Numbered migrations, in order. Never edit a shipped one: add the next number. */
export const MIGRATIONS: Migration[] = [
  migration0001,
  migration0002,
  migration0003,
  migration0004,
  migration0005,
  migration0006,
  migration0007,
  migration0008,
  migration0009,
  migration0010,
  migration0011,
  migration0012,
  migration0013,
];

/** Applies pending migrations in one transaction; refuses a database newer than this code. */
export function migrate(db: Db, migrations: Migration[] = MIGRATIONS): number {
  const current = db.pragma('user_version', { simple: true }) as number;
  const latest = migrations.at(-1)?.version ?? 0;
  if (current > latest) {
    // Exit 65, which systemd does not restart (docs/operations.md "Exit codes"): only a newer program helps.
    throw new ProcessError(
      'data',
      `database schema version ${current} is newer than this venue-box (${latest}); upgrade the program`,
    );
  }
  const pending = migrations.filter((m) => m.version > current);
  db.transaction(() => {
    for (const m of pending) {
      db.exec(m.up);
      db.pragma(`user_version = ${m.version}`);
    }
  }).immediate();
  return latest;
}
