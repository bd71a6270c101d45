import { spawnSync } from 'node:child_process';
import { expect, test } from 'vitest';

// Comments cite docs sections by heading (docs/<file>.md "Heading"); a moved or renamed section must take its
// citations along. The check lists each citation that names no heading.
test('every docs/<file>.md "Heading" citation names a heading of that file', () => {
  const run = spawnSync(process.execPath, ['scripts/check-doc-citations.mjs'], { encoding: 'utf8' });
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
});
