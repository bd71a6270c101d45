import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, test } from 'vitest';
import { type AddonEntry, AddonExtractError, ensureAddonFile } from './extract.js';

const root = mkdtempSync(join(tmpdir(), 'vb-addons-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const content = Buffer.from('not really an ELF file, but bytes all the same');
const entryOf = (data: Buffer, gzip = true): AddonEntry => ({
  asset: 'addons/x.node.gz',
  sha256: createHash('sha256').update(data).digest('hex'),
  bytes: data.length,
  gzip,
});
/** The asset as getRawAsset() gives it: an ArrayBuffer of exactly its bytes. */
const asset =
  (data: Buffer, gzip = true) =>
  (): ArrayBuffer => {
    const bytes = gzip ? gzipSync(data) : data;
    return new Uint8Array(bytes).buffer;
  };

describe('ensureAddonFile', () => {
  test('writes the addon once, named by its hash, and reuses it without reading the asset again', () => {
    const dir = mkdtempSync(join(root, 'case-'));
    const entry = entryOf(content);
    const file = ensureAddonFile(dir, 'uws', entry, asset(content));
    expect(file).toBe(join(dir, `uws-${entry.sha256.slice(0, 16)}.node`));
    expect(readFileSync(file)).toEqual(content);
    expect(readdirSync(dir)).toEqual([`uws-${entry.sha256.slice(0, 16)}.node`]); // no temp file left
    const again = ensureAddonFile(dir, 'uws', entry, () => {
      throw new Error('the asset must not be read when the file is there');
    });
    expect(again).toBe(file);
  });

  test('a plain (not gzipped) asset works too', () => {
    const dir = mkdtempSync(join(root, 'case-'));
    const file = ensureAddonFile(dir, 'plain', entryOf(content, false), asset(content, false));
    expect(readFileSync(file)).toEqual(content);
  });

  test('a truncated file (a size that does not match) is replaced', () => {
    const dir = mkdtempSync(join(root, 'case-'));
    const entry = entryOf(content);
    const file = join(dir, `uws-${entry.sha256.slice(0, 16)}.node`);
    writeFileSync(file, content.subarray(0, 5));
    ensureAddonFile(dir, 'uws', entry, asset(content));
    expect(readFileSync(file)).toEqual(content);
  });

  test('a damaged asset is refused and nothing is written', () => {
    const dir = mkdtempSync(join(root, 'case-'));
    const entry = entryOf(content);
    const damaged = Buffer.from(content);
    damaged[3] = damaged[3]! ^ 0xff;
    expect(() => ensureAddonFile(dir, 'uws', entry, asset(damaged))).toThrow(AddonExtractError);
    expect(readdirSync(dir)).toEqual([]);
  });

  test('an unwritable directory gives an error that names it', () => {
    const missing = join(mkdtempSync(join(root, 'case-')), 'no', 'such', 'dir');
    expect(() => ensureAddonFile(missing, 'uws', entryOf(content), asset(content))).toThrow(
      /cannot write native addon uws to .*no\/such\/dir/,
    );
  });

  test('older versions of the same addon and stale temp files go; other addons and fresh temp files stay', () => {
    const dir = mkdtempSync(join(root, 'case-'));
    const files = {
      olderSqlite: 'better-sqlite3-0123456789abcdef.node',
      otherAddon: 'better-0123456789abcdef.node', // a prefix of "better-sqlite3", a different addon
      staleTmp: 'better-sqlite3-0123456789abcdef.123-deadbeef.tmp',
      freshTmp: 'better-sqlite3-fedcba9876543210.456-cafebabe.tmp', // another process writing right now
    };
    for (const f of Object.values(files)) writeFileSync(join(dir, f), 'x');
    const twoHoursAgo = new Date(Date.now() - 7_200_000);
    utimesSync(join(dir, files.staleTmp), twoHoursAgo, twoHoursAgo);
    const file = ensureAddonFile(dir, 'better-sqlite3', entryOf(content), asset(content));
    expect(readdirSync(dir).sort()).toEqual([files.otherAddon, file.split('/').pop(), files.freshTmp].sort());
    expect(statSync(file).size).toBe(content.length);
  });
});
