import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { constants } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { GlibcCompatError, requiredGlibcVersions, withoutGlibc238 } from './glibc-compat.js';
import { uws } from './uws.js';

// The real addons of the installed uWebSockets.js, for both machines the box is built for.
const uwsDir = dirname(createRequire(import.meta.url).resolve('uWebSockets.js/package.json'));
const addon = (arch: string) => readFileSync(join(uwsDir, `uws_linux_${arch}_${process.versions.modules}.node`));
const glibc = process.report.getReport() as { header: { glibcVersionRuntime?: string } };
const [major = 0, minor = 0] = (glibc.header.glibcVersionRuntime ?? '0.0').split('.').map(Number);
const olderGlibc = major === 2 && minor < 38;

/** `image` with the first `from` (a NUL-terminated name in its string table) replaced by `to` of the same length. */
function renamed(image: Uint8Array, from: string, to: string): Uint8Array {
  const copy = Buffer.from(image);
  const at = copy.indexOf(`${from}\0`);
  expect(at).toBeGreaterThan(0);
  copy.write(to, at, 'latin1');
  return copy;
}

/** The section headers of an ELF64 file: type, offset, size, and where the header itself is. */
function sectionHeaders(image: Buffer): { type: number; offset: number; size: number; header: number }[] {
  const shoff = Number(image.readBigUInt64LE(0x28));
  return Array.from({ length: image.readUInt16LE(0x3c) }, (_, i) => {
    const header = shoff + i * image.readUInt16LE(0x3a);
    return {
      type: image.readUInt32LE(header + 4),
      offset: Number(image.readBigUInt64LE(header + 24)),
      size: Number(image.readBigUInt64LE(header + 32)),
      header,
    };
  });
}

describe('an addon linked against glibc 2.38, made loadable on 2.36', () => {
  for (const [arch, imports] of [
    ['x64', ['__isoc23_strtol', '__isoc23_strtoul', '__isoc23_strtoull']],
    ['arm64', ['__isoc23_strtol', '__isoc23_strtoul']],
  ] as const) {
    test(`${arch}: the C23 imports bound to the older functions, nothing else changed`, () => {
      const original = addon(arch);
      expect(requiredGlibcVersions(original)).toContain('GLIBC_2.38');
      const { image, renamed: names } = withoutGlibc238(original);
      expect(names).toEqual(imports);
      const versions = requiredGlibcVersions(image);
      expect(versions.at(-1)).toBe('GLIBC_2.36');
      expect(image.byteLength).toBe(original.byteLength);
      // Per import its name (4 bytes) and version index (2); the requirement's hash, flags and name (10).
      let changed = 0;
      for (let i = 0; i < image.byteLength; i++) if (image[i] !== original[i]) changed++;
      expect(changed).toBeGreaterThan(0);
      expect(changed).toBeLessThanOrEqual(imports.length * 6 + 10);
      // Done once: a second pass finds nothing to do.
      const again = withoutGlibc238(image);
      expect(again.image).toBe(image);
      expect(again.renamed).toEqual([]);
    });
  }

  test.runIf(olderGlibc && process.arch === 'x64')(
    `this glibc (${major}.${minor}) refuses the addon as shipped and loads it rewritten`,
    () => {
      const original = join(uwsDir, `uws_linux_x64_${process.versions.modules}.node`);
      expect(() => process.dlopen({ exports: {} }, original, constants.dlopen.RTLD_NOW)).toThrow(/GLIBC_2\.38/);
      const app = uws().App();
      expect(typeof app.listen).toBe('function');
      app.close();
    },
  );

  test('what renaming cannot fix is refused with its name', () => {
    const original = addon('x64');
    // Another C23 function of glibc 2.38, which has no older twin in the list.
    expect(() => withoutGlibc238(renamed(original, '__isoc23_strtoul', '__isoc23_strtoux'))).toThrow(
      new GlibcCompatError('__isoc23_strtoux needs GLIBC_2.38: renaming cannot help'),
    );
    // A newer glibc than 2.38.
    expect(() => withoutGlibc238(renamed(original, 'GLIBC_2.38', 'GLIBC_2.39'))).toThrow(
      /needs GLIBC_2\.39 of libc\.so\.6: renaming cannot help/,
    );
    // A newer version of another glibc library (libm's requirements name GLIBC_2.27 here, only libm's).
    const libm = renamed(original, 'GLIBC_2.27', 'GLIBC_2.40');
    expect(requiredGlibcVersions(libm)).toContain('GLIBC_2.40');
    expect(() => withoutGlibc238(libm)).toThrow(/needs GLIBC_2\.40 of libm\.so\.6: renaming cannot help/);
  });

  test('damaged version tables are refused, never read past', () => {
    const original = addon('x64');
    const sections = sectionHeaders(original);
    const verneed = sections.find((s) => s.type === 0x6ffffffe)!;
    const versym = sections.find((s) => s.type === 0x6fffffff)!;
    // The first library's entries said to lie past its section.
    const farAux = Buffer.from(original);
    farAux.writeUInt32LE(verneed.size + 64, verneed.offset + 8);
    expect(() => withoutGlibc238(farAux)).toThrow(
      new GlibcCompatError('a version requirement lies outside its section'),
    );
    // Fewer symbol versions than symbols.
    const shortVersym = Buffer.from(original);
    shortVersym.writeBigUInt64LE(BigInt(versym.size - 2), versym.header + 32);
    expect(() => withoutGlibc238(shortVersym)).toThrow(
      new GlibcCompatError('the symbol versions are fewer than the symbols'),
    );
  });

  test('bad files are refused, never misread', () => {
    expect(() => withoutGlibc238(Buffer.from('#!/bin/sh\necho not an addon\n'.padEnd(80)))).toThrow(
      new GlibcCompatError('not an ELF file'),
    );
    const original = addon('x64');
    const thirtyTwo = Buffer.from(original);
    thirtyTwo[4] = 1; // ELFCLASS32
    expect(() => withoutGlibc238(thirtyTwo)).toThrow(/not a 64-bit little-endian ELF file/);
    expect(() => withoutGlibc238(original.subarray(0, 4096))).toThrow(/section headers lie outside the file/);
  });
});
