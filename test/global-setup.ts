import { execFileSync } from 'node:child_process';
import useRunDir from './run-dir.js';
import { removeLeftoverNamespaces } from './support/netns.js';

/**
 * Integration tests run the bundled box (dist/main.cjs) as a real process: build it once first. Their temp
 * directories go under the run's own (test/run-dir.ts).
 */
export default function setup(): () => void {
  // Both integration projects (vitest.config.ts) run this: one build and one run directory serve them.
  if (process.env.VENUE_BOX_TEST_RUN === '1') return () => undefined;
  process.env.VENUE_BOX_TEST_RUN = '1';
  execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
  // A LAN of namespaces left by a test worker that was killed (test/support/netns.ts), and what runs in it:
  // an earlier run's before this one, this run's at its end.
  const leftovers = removeLeftoverNamespaces();
  if (leftovers.length > 0) console.warn(`removed network namespaces left by an earlier run: ${leftovers.join(' ')}`);
  const removeRunDir = useRunDir();
  return () => {
    const left = removeLeftoverNamespaces();
    if (left.length > 0) console.warn(`removed network namespaces left by this run's workers: ${left.join(' ')}`);
    removeRunDir();
  };
}
