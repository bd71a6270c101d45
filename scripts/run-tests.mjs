// `npm test` (README "Tests"): the gates first (lint and format, both type checks, the docs' citations), each
// counted as one check, then vitest once with its usual output; ends with the line CI reads: "N passed, N failed".
// Arguments go to vitest (`npm test -- test/sync.test.ts`); `--no-gates` leaves the gates out.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';

const args = process.argv.slice(2);
const withGates = !args.includes('--no-gates');
const vitestArgs = args.filter((a) => a !== '--no-gates');

const GATES = [
  { name: 'lint and format (biome check)', command: ['node_modules/@biomejs/biome/bin/biome', 'check', '.'] },
  { name: 'type check (tsc --noEmit)', command: ['node_modules/typescript/bin/tsc', '--noEmit'] },
  {
    name: 'type check of the screens (tsc -p web)',
    command: ['node_modules/typescript/bin/tsc', '-p', 'web', '--noEmit'],
  },
  { name: 'docs citations (scripts/check-doc-citations.mjs)', command: ['scripts/check-doc-citations.mjs'] },
];

let passed = 0;
let failed = 0;
if (withGates) {
  for (const gate of GATES) {
    if (!existsSync(gate.command[0])) throw new Error(`${gate.command[0]} is missing: run npm ci first`);
    const run = spawnSync(process.execPath, gate.command, { stdio: 'inherit' });
    if (run.status === 0) passed++;
    else failed++;
    console.log(`${run.status === 0 ? 'passed' : 'FAILED'}: ${gate.name}`);
  }
}

// The order of a file's tests is random (vitest.config.ts): the seed is printed so that a failing order repeats.
if (!vitestArgs.some((a) => a.startsWith('--sequence.seed'))) {
  const seed = Math.floor(Math.random() * 1e9);
  vitestArgs.push(`--sequence.seed=${seed}`);
  console.log(
    `tests in a random order within each file: seed ${seed} (npm test -- --sequence.seed=${seed} repeats it)`,
  );
}

const report = '.vitest-results.json';
rmSync(report, { force: true });
const run = spawnSync(
  process.execPath,
  [
    'node_modules/vitest/vitest.mjs',
    'run',
    '--reporter=default',
    '--reporter=json',
    `--outputFile.json=${report}`,
    ...vitestArgs,
  ],
  { stdio: 'inherit' },
);
try {
  const results = JSON.parse(readFileSync(report, 'utf8'));
  passed += results.numPassedTests;
  failed += results.numFailedTests;
  // A file that failed with no failed test (it did not load, a hook threw) counts once.
  failed += results.testResults.filter(
    (file) => file.status === 'failed' && !file.assertionResults.some((t) => t.status === 'failed'),
  ).length;
} catch {
  failed += 1; // no report: vitest itself failed
}
if (run.status !== 0 && failed === 0) failed = 1;
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
