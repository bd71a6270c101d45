import { execFileSync } from 'node:child_process';

/** Integration tests run the bundled box (dist/main.cjs) as a real process: build it once first. */
export default function setup(): void {
  execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
}
