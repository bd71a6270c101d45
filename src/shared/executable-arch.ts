/**
 * Which architecture an executable or addon is for, and how this machine runs one of another architecture: under
 * qemu user emulation (docs/operations.md "Flashing a venue box"). `venue-box release sign` runs the binary it
 * signs (src/modules/update/release-info.ts); scripts/lib/emulation.mjs re-exports this file for build.sh,
 * scripts/build-sea.mjs (every addon must be for the target), scripts/bench-binary.mjs and the arm64 tests.
 *
 * Written as erasable TypeScript importing only node: modules, so that scripts load this file directly (Node 24's
 * type stripping), as they do src/native/glibc-compat.ts.
 */
import { closeSync, existsSync, openSync, readSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** ELF e_machine of each architecture a box may have. */
const ELF_MACHINE: Record<string, number> = { x64: 0x3e, arm64: 0xb7, arm: 0x28 };

/** Debian's qemu-user-static emulators and cross runtimes (libc6-*-cross, libstdc++6-*-cross). */
const EMULATORS: Record<string, { command: string; sysroot: string; packages: string }> = {
  arm64: {
    command: 'qemu-aarch64-static',
    sysroot: '/usr/aarch64-linux-gnu',
    packages: 'qemu-user-static libc6-arm64-cross libstdc++6-arm64-cross',
  },
};

/** 'x64', 'arm64', 'arm', or a description of what the file is when it is none of them. */
export function binaryArch(file: string): string {
  const header = Buffer.alloc(20);
  const fd = openSync(file, 'r');
  let read: number;
  try {
    read = readSync(fd, header, 0, header.length, 0);
  } finally {
    closeSync(fd);
  }
  if (read < header.length || header.readUInt32BE(0) !== 0x7f454c46) return 'not an ELF file';
  const machine = header.readUInt16LE(18);
  return (
    Object.keys(ELF_MACHINE).find((arch) => ELF_MACHINE[arch] === machine) ?? `ELF machine 0x${machine.toString(16)}`
  );
}

/** How to run a program of another architecture; `missing` says what to install when it cannot be run. */
export interface Emulator {
  command?: string;
  env?: Record<string, string>;
  missing?: string;
}

/** The first executable file named `command` in the directories of PATH, or undefined. */
export function findOnPath(command: string, path: string = process.env.PATH ?? ''): string | undefined {
  return path
    .split(delimiter)
    .filter(Boolean)
    .map((dir) => join(dir, command))
    .find((f) => existsSync(f));
}

/**
 * How to run an executable for `arch` here: null for this machine's own architecture; otherwise the emulator's
 * path and the environment it needs (QEMU_LD_PREFIX: where the target's dynamic loader and libraries are), or
 * `missing` saying what to install.
 */
export function emulatorFor(arch: string): Emulator | null {
  if (arch === process.arch) return null;
  const emulator = EMULATORS[arch];
  if (!emulator) return { missing: `this machine (${process.arch}) cannot run ${arch} programs` };
  const command = findOnPath(emulator.command);
  const missing = !command
    ? `${emulator.command} is not installed (apt-get install ${emulator.packages})`
    : !existsSync(join(emulator.sysroot, 'lib/libstdc++.so.6'))
      ? `the ${arch} C and C++ runtimes are not in ${emulator.sysroot} (apt-get install ${emulator.packages})`
      : undefined;
  return { command, env: { QEMU_LD_PREFIX: emulator.sysroot }, ...(missing && { missing }) };
}
