import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { type Static, Type } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import pkg from '../../../package.json';
import { MIGRATIONS } from '../../db/migrate.js';
import { ProcessError } from '../../shared/errors.js';
import { binaryArch, emulatorFor } from '../../shared/executable-arch.js';
import { ARCHS, type Arch, Version } from '../../shared/release-schemas.js';

/**
 * What a release's manifest says about its binary, asked of the binary itself (`BINARY release info`), so that a
 * manifest can never describe another build than the one it is signed with: its version, architecture, Node and
 * the box schema it migrates to.
 */
export const BinaryInfo = Type.Object({
  version: Version,
  arch: Type.Union(ARCHS.map((a) => Type.Literal(a))),
  node: Type.String({ pattern: '^\\d+\\.\\d+\\.\\d+$' }),
  schema: Type.Object({ box: Type.Integer({ minimum: 1 }) }),
});
export type BinaryInfo = Static<typeof BinaryInfo>;
const BINARY_INFO = TypeCompiler.Compile(BinaryInfo);

/** This program's info: what `venue-box release info` prints. */
export function currentInfo(): BinaryInfo {
  return {
    version: pkg.version,
    arch: process.arch as Arch,
    node: process.versions.node,
    schema: { box: MIGRATIONS.at(-1)!.version },
  };
}

/** Under qemu a start takes seconds, more on a busy machine; natively 0.1 s. */
const INFO_TIMEOUT_MS = 120_000;

/**
 * Runs `BINARY release info`: directly when the binary is for this machine's architecture (its ELF header says),
 * under qemu user emulation for arm64 on x64. ProcessErrors: no such file (66), not a venue-box binary (65), an
 * architecture this machine cannot run (69, naming the Debian packages).
 */
export async function infoOfBinary(file: string): Promise<BinaryInfo> {
  const arch = archOf(file);
  const emulator = emulatorFor(arch);
  if (emulator?.missing) {
    throw new ProcessError(
      'unavailable',
      `cannot run ${file}, an ${arch} binary, on this ${process.arch} machine: ${emulator.missing}`,
    );
  }
  // The binary writes its addons to a cache at start: a directory of its own, so that signing leaves nothing behind.
  const cache = mkdtempSync(join(tmpdir(), 'venue-box-release-info-'));
  const { NODE_OPTIONS: _, ...env } = process.env;
  // An absolute path: a bare name (`venue-box`) would otherwise be looked up on PATH, and another program run.
  const path = resolve(file);
  const [command, args] = emulator?.command
    ? [emulator.command, [path, 'release', 'info']]
    : [path, ['release', 'info']];
  try {
    const run = await new Promise<{ code: number | string | null; stdout: string; stderr: string }>((resolve) => {
      execFile(
        command,
        args,
        {
          env: { ...env, ...emulator?.env, VENUE_BOX_CACHE: cache },
          timeout: INFO_TIMEOUT_MS,
          maxBuffer: 64 * 1024,
          encoding: 'utf8',
        },
        (err, stdout, stderr) => {
          resolve({ code: err ? ((err as { code?: number | string }).code ?? 'killed') : 0, stdout, stderr });
        },
      );
    });
    if (run.code === 'EACCES') throw new ProcessError('data', `${file} is not executable (chmod +x it)`);
    const info = parseInfoOutput(run.stdout);
    if (run.code !== 0 || !info) {
      const said = (run.stderr.trim().split('\n')[0] ?? '').slice(0, 200);
      const how = run.code === 0 ? 'printed no release info' : `exited ${run.code}`;
      throw new ProcessError(
        'data',
        `${file} is not a venue-box binary with release commands ('${basename(file)} release info' ${how}${said ? `: ${said}` : ''})`,
      );
    }
    if (info.arch !== arch) {
      throw new ProcessError('data', `${file} says it is for ${info.arch}, but its ELF header is ${arch}'s`);
    }
    return info;
  } finally {
    rmSync(cache, { recursive: true, force: true });
  }
}

/** The info line of `release info`'s output (its last line), or undefined when it is not one. */
export function parseInfoOutput(stdout: string): BinaryInfo | undefined {
  const line = stdout.trim().split('\n').at(-1) ?? '';
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch {
    return undefined;
  }
  return BINARY_INFO.Check(json) ? json : undefined;
}

/** The architecture of a release binary; ProcessErrors for a missing file or one that is not an x64 or arm64 ELF. */
export function archOf(file: string): Arch {
  let isFile: boolean;
  try {
    isFile = statSync(file).isFile();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new ProcessError('noInput', `no binary at ${file}`);
    throw err;
  }
  if (!isFile) throw new ProcessError('data', `${file} is not a file`);
  const arch = binaryArch(file);
  if (arch === 'not an ELF file') throw new ProcessError('data', `${file} is not a venue-box binary (not an ELF file)`);
  if (!(ARCHS as readonly string[]).includes(arch)) {
    throw new ProcessError('data', `${file} is an ${arch} executable; releases are for ${ARCHS.join(' and ')}`);
  }
  return arch as Arch;
}
