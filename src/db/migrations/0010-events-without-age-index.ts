import type { Migration } from '../migrate.js';

/**
 * The socket events' retention removes the oldest rows in rowid order (the order they were written) up to the
 * first one young enough, reading only what it removes (src/modules/events/event-store.ts), so the index on
 * created_ms is no longer read: it cost every command one more b-tree page in the WAL (docs/operations.md
 * "What a `new` writes").
 */
export const migration0010: Migration = {
  version: 10,
  name: 'events-without-age-index',
  up: `
DROP INDEX user_events_age;
`,
};
