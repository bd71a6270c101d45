import { execFileSync } from 'node:child_process';
import useRunDir from './run-dir.js';

/**
 * Integration tests run the bundled box (dist/main.cjs) as a real process: build it once first. Their temp
 * directories go under the run's own (test/run-dir.ts).
 */
export default function setup(): () => void {
  execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
  return useRunDir();
}
