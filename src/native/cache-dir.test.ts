import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { CacheDirError, chooseCacheDir } from './cache-dir.js';

const root = mkdtempSync(join(tmpdir(), 'vb-cache-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const uid = process.getuid?.() ?? -1;
const scratch = () => mkdtempSync(join(root, 'case-'));
/** A path no one can create a directory at (a file is in the way), standing in for /var/cache/venue-box. */
const blocked = () => {
  const file = join(scratch(), 'a-file');
  writeFileSync(file, '');
  return join(file, 'venue-box');
};

describe('chooseCacheDir', () => {
  test('VENUE_BOX_CACHE wins, created when missing', () => {
    const dir = join(scratch(), 'explicit');
    expect(chooseCacheDir({ env: { VENUE_BOX_CACHE: dir, XDG_CACHE_HOME: scratch() }, uid, tmp: scratch() })).toBe(dir);
    expect(statSync(dir).isDirectory()).toBe(true);
  });

  test('an unusable VENUE_BOX_CACHE is an error, not a silent fallback', () => {
    expect(() => chooseCacheDir({ env: { VENUE_BOX_CACHE: blocked() }, uid, tmp: scratch() })).toThrow(CacheDirError);
  });

  test("then systemd's CACHE_DIRECTORY, XDG_CACHE_HOME/venue-box, the appliance's directory", () => {
    const systemd = scratch();
    const xdg = scratch();
    const system = join(scratch(), 'var-cache-venue-box');
    const tmp = scratch();
    expect(
      chooseCacheDir({ env: { CACHE_DIRECTORY: `${systemd}:/other`, XDG_CACHE_HOME: xdg }, uid, tmp, system }),
    ).toBe(systemd);
    expect(chooseCacheDir({ env: { XDG_CACHE_HOME: xdg }, uid, tmp, system })).toBe(join(xdg, 'venue-box'));
    expect(chooseCacheDir({ env: { XDG_CACHE_HOME: blocked() }, uid, tmp, system })).toBe(system);
  });

  test('last, a directory private to this user in the temp directory', () => {
    const tmp = scratch();
    const chosen = chooseCacheDir({ env: {}, uid, tmp, system: blocked() });
    expect(chosen).toBe(join(tmp, `venue-box-${uid}`));
    expect(statSync(chosen).mode & 0o777).toBe(0o700);
  });

  test('a temp directory others can write to, or a symlink, is refused: a planted addon would run as us', () => {
    const tmp = scratch();
    const open = join(tmp, `venue-box-${uid}`);
    mkdirSync(open);
    chmodSync(open, 0o777);
    expect(() => chooseCacheDir({ env: {}, uid, tmp, system: blocked() })).toThrow(/not a private directory/);
    const tmp2 = scratch();
    symlinkSync(scratch(), join(tmp2, `venue-box-${uid}`));
    expect(() => chooseCacheDir({ env: {}, uid, tmp: tmp2, system: blocked() })).toThrow(/not a private directory/);
  });
});
