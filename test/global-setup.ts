import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Integration tests run the bundled box (dist/main.cjs) as a real process: build it once first. Every temp
 * directory of the run (data dirs, configs, the boxes' and centrals' files) goes under one directory of its
 * own, through TMPDIR, which the test workers and the processes they start inherit; it is removed at the end.
 */
export default function setup(): () => void {
  execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
  const run = mkdtempSync(join(tmpdir(), 'vb-run-'));
  // An embedded PostgreSQL runs as the `postgres` user when the tests run as root: it must pass through.
  chmodSync(run, 0o711);
  process.env.TMPDIR = run;
  return () => rmSync(run, { recursive: true, force: true });
}
