/**
 * Lets a prebuilt addon linked against glibc 2.38 load on glibc 2.36 (Debian 12, Raspberry Pi OS bookworm):
 * docs/architecture.md "Runtime and native addons".
 *
 * uWebSockets.js's Node 24 builds were compiled against a C23-era glibc, whose headers turn `strtol`,
 * `strtoul`, `strtoull` and `strtoll` into `__isoc23_strtol` and friends (symbol version GLIBC_2.38), and
 * nothing else in them needs more than 2.36. The C23 functions differ from the older ones only in that, for
 * base 0 or 2, they also read a `0b` prefix. This rewrites the ELF's dynamic symbols in place, without changing
 * a byte of code: each such import is pointed at the older function's name (the same string, nine bytes further
 * on: `__isoc23_strtol` ends in `strtol`) with the machine's base glibc version, and the GLIBC_2.38
 * requirement itself is renamed to that base version (glibc then checks that one twice). Any other symbol that
 * needs GLIBC_2.38, or a requirement of a newer glibc, is refused: those cannot be met by renaming.
 *
 * Written as erasable TypeScript with no imports, so that scripts/build-sea.mjs loads this file directly.
 */

/** What renaming cannot fix. */
export class GlibcCompatError extends Error {}

/** The imports the C23 headers made of the older functions: the older name is the C23 name without this prefix. */
const C23_PREFIX = '__isoc23_';
const C23_RENAMED = new Set(['strtol', 'strtoul', 'strtoll', 'strtoull']);
const TOO_NEW = 'GLIBC_2.38';
/** The version of glibc's first release on each machine: `strtol` and friends carry it. */
const BASE_VERSION: Record<number, string> = { 62: 'GLIBC_2.2.5', 183: 'GLIBC_2.17' };

const SHT_DYNSYM = 11;
const SHT_GNU_VERNEED = 0x6ffffffe;
const SHT_GNU_VERSYM = 0x6fffffff;
const SYM_SIZE = 24;

interface Section {
  type: number;
  offset: number;
  size: number;
  link: number;
}

interface VersionNeed {
  /** Offset of the Vernaux entry in the file. */
  at: number;
  hash: number;
  index: number;
  nameOffset: number;
  name: string;
}

export interface CompatResult {
  /** The image to load: the input itself when nothing needed changing. */
  image: Uint8Array;
  /** The imports that were pointed at the older functions, by their C23 names. */
  renamed: string[];
}

/** Returns `image` made loadable on glibc 2.36, or `image` itself when it needs nothing newer. */
export function withoutGlibc238(image: Uint8Array): CompatResult {
  const elf = parse(image);
  if (!elf) return { image, renamed: [] };
  const { view, dynsym, versym, needs, text } = elf;
  const glibc = [...needs].flatMap(([file, list]) =>
    list.filter((v) => v.name.startsWith('GLIBC_')).map((v) => ({ ...v, file })),
  );
  const newer = glibc.filter((v) => versionAbove(v.name, TOO_NEW) || (v.name === TOO_NEW && v.file !== 'libc.so.6'));
  if (newer.length > 0) {
    throw new GlibcCompatError(`needs ${newer.map((v) => `${v.name} of ${v.file}`).join(', ')}: renaming cannot help`);
  }
  const libc = needs.get('libc.so.6') ?? [];
  const tooNew = libc.find((v) => v.name === TOO_NEW);
  if (!tooNew) return { image, renamed: [] };
  const machine = view.getUint16(0x12, true);
  const baseName = BASE_VERSION[machine];
  const base = libc.find((v) => v.name === baseName);
  if (!base)
    throw new GlibcCompatError(
      `no ${baseName ?? 'base version'} requirement on libc.so.6 to bind to (machine ${machine})`,
    );

  const out = new Uint8Array(image); // a copy (a Buffer's slice() would share the input's memory)
  const outView = new DataView(out.buffer, out.byteOffset, out.byteLength);
  const renamed: string[] = [];
  const count = Math.floor(dynsym.size / SYM_SIZE);
  for (let i = 0; i < count; i++) {
    const versionAt = versym.offset + i * 2;
    if ((view.getUint16(versionAt, true) & 0x7fff) !== tooNew.index) continue;
    const symAt = dynsym.offset + i * SYM_SIZE;
    const nameOffset = view.getUint32(symAt, true);
    const name = text(nameOffset);
    const older = name.startsWith(C23_PREFIX) ? name.slice(C23_PREFIX.length) : '';
    if (!C23_RENAMED.has(older) || view.getUint16(symAt + 6, true) !== 0) {
      throw new GlibcCompatError(`${name} needs ${TOO_NEW}: renaming cannot help`);
    }
    outView.setUint32(symAt, nameOffset + C23_PREFIX.length, true);
    outView.setUint16(versionAt, base.index, true);
    renamed.push(name);
  }
  // Vernaux: vna_hash (0), vna_flags (4), vna_other (6), vna_name (8), vna_next (12).
  outView.setUint32(tooNew.at, base.hash, true);
  outView.setUint16(tooNew.at + 4, 0, true);
  outView.setUint32(tooNew.at + 8, base.nameOffset, true);
  return { image: out, renamed: renamed.sort() };
}

/** The glibc versions an ELF image requires, of every library it names (for tests and the build's log). */
export function requiredGlibcVersions(image: Uint8Array): string[] {
  const elf = parse(image);
  if (!elf) return [];
  const names = [...elf.needs.values()]
    .flatMap((list) => list.map((v) => v.name))
    .filter((n) => n.startsWith('GLIBC_'));
  return [...new Set(names)].sort(compareVersions);
}

interface Elf {
  view: DataView;
  dynsym: Section;
  versym: Section;
  /** Version requirements by library file name. */
  needs: Map<string, VersionNeed[]>;
  /** A name of the dynamic symbols' string table. */
  text(offset: number): string;
}

/** The dynamic symbols and version requirements, every offset checked; undefined when the file has none. */
function parse(image: Uint8Array): Elf | undefined {
  const view = new DataView(image.buffer, image.byteOffset, image.byteLength);
  checkHeader(image);
  const sections = readSections(view);
  const dynsym = sections.find((s) => s.type === SHT_DYNSYM);
  const versym = sections.find((s) => s.type === SHT_GNU_VERSYM);
  const verneed = sections.find((s) => s.type === SHT_GNU_VERNEED);
  if (!dynsym || !versym || !verneed) return undefined;
  const dynstr = sections[dynsym.link];
  const needstr = sections[verneed.link];
  if (!dynstr || !needstr) throw new GlibcCompatError('a symbol or version section names no string table');
  if (versym.size < Math.floor(dynsym.size / SYM_SIZE) * 2)
    throw new GlibcCompatError('the symbol versions are fewer than the symbols');
  const needs = readVersionNeeds(view, verneed, (offset) => readString(image, needstr, offset));
  return { view, dynsym, versym, needs, text: (offset) => readString(image, dynstr, offset) };
}

function checkHeader(image: Uint8Array): void {
  const magic = image.length >= 64 && image[0] === 0x7f && image[1] === 0x45 && image[2] === 0x4c && image[3] === 0x46;
  if (!magic) throw new GlibcCompatError('not an ELF file');
  // ELFCLASS64, little-endian: every machine the box is built for (x64, arm64).
  if (image[4] !== 2 || image[5] !== 1) throw new GlibcCompatError('not a 64-bit little-endian ELF file');
}

function readSections(view: DataView): Section[] {
  const shoff = Number(view.getBigUint64(0x28, true));
  const shentsize = view.getUint16(0x3a, true);
  const shnum = view.getUint16(0x3c, true);
  if (shoff === 0 || shnum === 0) throw new GlibcCompatError('the ELF file has no section headers');
  if (shentsize < 64 || shoff + shnum * shentsize > view.byteLength)
    throw new GlibcCompatError('the section headers lie outside the file');
  const sections: Section[] = [];
  for (let i = 0; i < shnum; i++) {
    const at = shoff + i * shentsize;
    const section = {
      type: view.getUint32(at + 4, true),
      offset: Number(view.getBigUint64(at + 24, true)),
      size: Number(view.getBigUint64(at + 32, true)),
      link: view.getUint32(at + 40, true),
    };
    const inFile = section.type === 8 /* SHT_NOBITS */ || section.offset + section.size <= view.byteLength;
    if (!inFile) throw new GlibcCompatError(`section ${i} lies outside the file`);
    sections.push(section);
  }
  return sections;
}

/** Verneed entries by file name: vn_version (0), vn_cnt (2), vn_file (4), vn_aux (8), vn_next (12). */
function readVersionNeeds(
  view: DataView,
  verneed: Section,
  text: (offset: number) => string,
): Map<string, VersionNeed[]> {
  const needs = new Map<string, VersionNeed[]>();
  const end = verneed.offset + verneed.size;
  const inside = (at: number) => {
    if (at < verneed.offset || at + 16 > end)
      throw new GlibcCompatError('a version requirement lies outside its section');
    return at;
  };
  let at = inside(verneed.offset);
  for (let guard = 0; ; guard++) {
    if (guard >= 1024) throw new GlibcCompatError('the version requirements do not end');
    const file = text(view.getUint32(at + 4, true));
    const list = needs.get(file) ?? [];
    let aux = at + view.getUint32(at + 8, true);
    for (let n = view.getUint16(at + 2, true); n > 0; n--) {
      inside(aux);
      const nameOffset = view.getUint32(aux + 8, true);
      list.push({
        at: aux,
        hash: view.getUint32(aux, true),
        index: view.getUint16(aux + 6, true) & 0x7fff,
        nameOffset,
        name: text(nameOffset),
      });
      const next = view.getUint32(aux + 12, true);
      if (next === 0 && n > 1) throw new GlibcCompatError("a library's version requirements end early");
      aux += next;
    }
    needs.set(file, list);
    const next = view.getUint32(at + 12, true);
    if (next === 0) return needs;
    at = inside(at + next);
  }
}

function readString(image: Uint8Array, table: Section, offset: number): string {
  if (offset >= table.size) throw new GlibcCompatError('a name lies outside its string table');
  let text = '';
  for (let at = table.offset + offset; ; at++) {
    if (at >= table.offset + table.size) throw new GlibcCompatError('a name runs past the end of its string table');
    if (image[at] === 0) return text;
    text += String.fromCharCode(image[at]!);
  }
}

function parts(version: string): number[] {
  return version
    .replace(/^GLIBC_/, '')
    .split('.')
    .map(Number);
}

function compareVersions(a: string, b: string): number {
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

function versionAbove(version: string, than: string): boolean {
  return /^GLIBC_\d+(\.\d+)*$/.test(version) && compareVersions(version, than) > 0;
}
