import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Every temp directory of a test run (data dirs, configs, keys, the boxes' and centrals' files) goes under one
 * directory of its own, through TMPDIR, which the test workers and the processes they start inherit; it is
 * removed at the end, so a run leaves nothing in /tmp. The global setup of both projects (vitest.config.ts).
 */
export default function setup(): () => void {
  const run = mkdtempSync(join(tmpdir(), 'vb-run-'));
  // An embedded PostgreSQL runs as the `postgres` user when the tests run as root: it must pass through.
  chmodSync(run, 0o711);
  process.env.TMPDIR = run;
  return () => rmSync(run, { recursive: true, force: true });
}
