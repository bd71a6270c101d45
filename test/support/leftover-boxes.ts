import { relative } from 'node:path';
import { afterAll, expect } from 'vitest';
import { liveBoxes } from './box.js';

/**
 * Runs after every integration test file (vitest.config.ts setupFiles; its afterAll is the file's last): a box
 * that a test started and never stopped would outlive the test worker, holding its port and memory on the machine
 * after the suite. It is named, as a warning, and killed.
 */
afterAll(() => {
  for (const [proc, startedBy] of liveBoxes) {
    const path = expect.getState().testPath;
    const file = path ? relative(process.cwd(), path) : 'a test file';
    console.warn(`${file}: the box started by "${startedBy}" was still running after the file's tests: killed`);
    proc.kill('SIGKILL');
  }
  liveBoxes.clear();
});
