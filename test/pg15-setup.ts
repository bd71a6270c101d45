import type { TestProject } from 'vitest/node';
import { startDebianPostgres } from './support/debian-postgres.js';

/**
 * The global setup of the `central-pg15` project (vitest.config.ts): one cluster of Debian's PostgreSQL 15 for
 * the run, whose URL the test centrals get (test/support/central.ts: a database each). docs/sync.md "Running it"
 * claims PostgreSQL 15 or newer by URL; this project is that claim's test.
 */
export default async function setup(project: TestProject): Promise<() => void> {
  const pg = await startDebianPostgres();
  project.provide('debianPostgres', pg.url());
  return () => pg.stop();
}
