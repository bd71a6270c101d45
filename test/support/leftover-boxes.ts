import { relative } from 'node:path';
import { afterAll, expect } from 'vitest';
import { liveBoxes } from './box.js';
import { closeLeftoverLans } from './netns.js';

/**
 * Runs after every integration test file (vitest.config.ts setupFiles; its afterAll is the file's last): a box
 * that a test started and never stopped would outlive the test worker, holding its port and memory on the machine
 * after the suite. It is named, as a warning, and killed; so is a LAN of network namespaces left open.
 */
afterAll(async () => {
  const path = expect.getState().testPath;
  const file = path ? relative(process.cwd(), path) : 'a test file';
  for (const [proc, startedBy] of liveBoxes) {
    console.warn(`${file}: the box started by "${startedBy}" was still running after the file's tests: killed`);
    proc.kill('SIGKILL');
  }
  liveBoxes.clear();
  // The same for a LAN of network namespaces (test/support/netns.ts): its processes killed, namespaces deleted.
  for (const prefix of await closeLeftoverLans())
    console.warn(`${file}: the LAN ${prefix}* was still up after the file's tests: closed`);
});
