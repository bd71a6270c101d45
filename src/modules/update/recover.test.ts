import { existsSync, mkdirSync, mkdtempSync, readlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { describe, expect, test } from 'vitest';
import { installRelease, pointLink, pruneReleases } from './layout.js';
import { guardStart, recoverInterruptedInstall } from './recover.js';
import { type InstallJournal, readJournal, readStatus, writeJournal } from './state.js';

const log = pino({ level: 'silent' });

function layout() {
  const root = mkdtempSync(join(tmpdir(), 'vb-update-unit-'));
  const dir = join(root, 'opt');
  const dataDir = join(root, 'data');
  mkdirSync(dir);
  mkdirSync(dataDir);
  for (const v of ['1.0.0', '1.1.0']) {
    const file = join(root, `bin-${v}`);
    writeFileSync(file, `#!/bin/sh\necho ${v}\n`);
    installRelease(dir, v, file, undefined, false);
  }
  pointLink(dir, 'previous', '1.0.0');
  pointLink(dir, 'current', '1.1.0');
  return { dir, dataDir };
}

const journal = (phase: InstallJournal['phase'], starts = 0): InstallJournal => ({
  phase,
  from: '1.0.0',
  to: '1.1.0',
  sha256: 'a'.repeat(64),
  key: 'signature-a',
  backup: null,
  schemaBefore: 0,
  starts,
  startedMs: 1,
  releaseKeys: [],
});

describe('the guard before each start', () => {
  test('counts the starts of a release switched to, and puts the previous one back past the limit', () => {
    const { dir, dataDir } = layout();
    writeJournal(dataDir, journal('switched'));
    expect(guardStart(dataDir, dir, 2, log)).toMatch(/start 1 of 2/);
    expect(guardStart(dataDir, dir, 2, log)).toMatch(/start 2 of 2/);
    expect(readlinkSync(join(dir, 'current'))).toBe('releases/1.1.0');
    expect(guardStart(dataDir, dir, 2, log)).toMatch(/did not come up in 2 starts/);
    expect(readlinkSync(join(dir, 'current'))).toBe('releases/1.0.0');
    // The old release, starting next, records the rollback and clears the journal.
    recoverInterruptedInstall(dataDir, '1.0.0', log, 5);
    expect(readJournal(dataDir)).toBeUndefined();
    expect(readStatus(dataDir, 5)).toMatchObject({ state: 'rolledBack', reason: 'crashLoop', target: '1.1.0' });
  });

  test('does nothing without an install, or during a trial', () => {
    const { dir, dataDir } = layout();
    expect(guardStart(dataDir, dir, 3, log)).toBe('no install under way');
    writeJournal(dataDir, journal('trial'));
    expect(guardStart(dataDir, dir, 3, log)).toBe('no install under way');
  });
});

describe('an install cut short', () => {
  test('is tried again twice, then counts as rolled back', () => {
    const { dataDir } = layout();
    for (const tries of [1, 2]) {
      writeJournal(dataDir, journal('trial'));
      recoverInterruptedInstall(dataDir, '1.0.0', log, tries);
      expect(readStatus(dataDir, 0)).toMatchObject({ state: 'verified', interrupted: { 'signature-a': tries } });
    }
    writeJournal(dataDir, journal('switching'));
    recoverInterruptedInstall(dataDir, '1.0.0', log, 3);
    expect(readStatus(dataDir, 0)).toMatchObject({ state: 'rolledBack', reason: 'interrupted' });
    expect(readStatus(dataDir, 0).refused['signature-a']).toEqual({ version: '1.1.0', reason: 'interrupted' });
  });

  test('is left to the new release once the links name it', () => {
    const { dataDir } = layout();
    writeJournal(dataDir, journal('switched', 1));
    recoverInterruptedInstall(dataDir, '1.1.0', log, 1);
    expect(readJournal(dataDir)?.phase).toBe('switched');
  });
});

describe('the release directory', () => {
  test('prunes all but the releases named, and leftovers of a cut install', () => {
    const { dir } = layout();
    mkdirSync(join(dir, 'releases', '.1.2.0.123.tmp'));
    writeFileSync(join(dir, 'x'), 'x');
    installRelease(dir, '0.9.0', join(dir, 'x'), undefined, false);
    expect(pruneReleases(dir, ['1.0.0', '1.1.0']).sort()).toEqual(['.1.2.0.123.tmp', '0.9.0']);
    expect(existsSync(join(dir, 'releases', '1.0.0', 'venue-box'))).toBe(true);
  });
});
