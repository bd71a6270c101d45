import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Program } from '../../command-line.js';
import { isoOf, nowMs } from '../../shared/clock.js';
import { ProcessError, usageError } from '../../shared/errors.js';
import { fsyncPath } from '../../shared/files.js';
import { ReleaseRefused, signManifest, verifyRelease } from '../../shared/release.js';
import { type ReleaseManifest, type SignedRelease, PUBLIC_KEY_PATTERN } from '../../shared/release-schemas.js';
import { digestOf } from '../../shared/files.js';
import { archOf, type BinaryInfo, currentInfo, infoOfBinary } from './release-binary.js';
import { newReleaseKey, readReleaseKey, writeReleaseKey } from './release-key.js';

const USAGE = `Usage:
  venue-box release keygen --out FILE
  venue-box release rotate --key OLD --out NEW
  venue-box release sign BINARY --key KEY [--notes TEXT] [--rollback] [--out FILE]
  venue-box release verify FILE --public-key B64 [--public-key B64 ...] [--binary BINARY]
  venue-box release info

Releases of the box's program, signed offline by headquarters (docs/operations.md "Updating boxes"):
  keygen    a new Ed25519 release key in FILE (created, never overwritten; mode 0600; keep it offline);
            prints its public key, the line for the boxes' configuration (update.releaseKeys)
  rotate    a new key in NEW vouched for by OLD: releases it signs carry the rotation, so a box that trusts
            OLD installs them and from then on trusts NEW only; prints NEW's public key
  sign      writes BINARY.release.json (or --out FILE): the signed manifest of BINARY, its version, Node,
            architecture and box schema read from BINARY itself (run under qemu for arm64 on x64); --rollback
            lets boxes on a newer version install it
  verify    checks FILE's signature against the trusted public keys and, with --binary, the binary's size and
            sha256; prints the manifest; exit 1 when a box would refuse it, with the reason
  info      this binary's version, architecture, Node and box schema, as one JSON line
`;

const OPTIONS = {
  out: { type: 'string' },
  key: { type: 'string' },
  notes: { type: 'string' },
  rollback: { type: 'boolean' },
  'public-key': { type: 'string', multiple: true },
  binary: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

const PUBLIC_KEY = new RegExp(PUBLIC_KEY_PATTERN);
const MAX_NOTES = 4000;

/** `venue-box release ...`, run by the one front end (src/command-line.ts). */
export const RELEASE: Program<typeof OPTIONS> = {
  name: 'venue-box release',
  help: USAGE,
  options: OPTIONS,
  commands: [
    { words: ['keygen'], run: (values) => keygen(required(values.out, 'keygen needs --out FILE')) },
    {
      words: ['rotate'],
      run: (values) =>
        rotate(required(values.key, 'rotate needs --key OLD'), required(values.out, 'rotate needs --out NEW')),
    },
    {
      words: ['sign'],
      args: 1,
      run: (values, [binary]) =>
        sign(binary!, {
          key: required(values.key, 'sign needs --key KEY (a file from venue-box release keygen)'),
          notes: values.notes ?? '',
          rollback: values.rollback === true,
          out: values.out ?? `${binary}.release.json`,
        }),
    },
    {
      words: ['verify'],
      args: 1,
      run(values, [file]) {
        const keys = values['public-key'] ?? [];
        if (keys.length === 0) throw usageError('verify needs --public-key B64 (a release key the boxes trust)');
        for (const key of keys) {
          if (!PUBLIC_KEY.test(key))
            throw usageError(`--public-key must be an Ed25519 public key in base64, got ${key}`);
        }
        return verify(file!, keys, values.binary);
      },
    },
    { words: ['info'], run: () => print(`${JSON.stringify(currentInfo())}\n`) },
  ],
};

function required(value: string | undefined, message: string): string {
  if (value === undefined || value === '') throw usageError(message);
  return value;
}

function print(text: string): number {
  process.stdout.write(text);
  return 0;
}

function keygen(out: string): number {
  const key = newReleaseKey();
  writeReleaseKey(out, key);
  return print(`${key.publicKey}\n`);
}

function rotate(oldFile: string, out: string): number {
  const key = newReleaseKey(readReleaseKey(oldFile));
  writeReleaseKey(out, key);
  return print(`${key.publicKey}\n`);
}

/** The manifest of a binary: what it says of itself, its bytes' digest, and headquarters' notes. */
export function manifestOf(
  info: BinaryInfo,
  digest: { sha256: string; size: number },
  opts: { notes: string; rollback: boolean; createdAt: string },
): ReleaseManifest {
  return {
    format: 1,
    version: info.version,
    arch: info.arch,
    sha256: digest.sha256,
    size: digest.size,
    node: info.node,
    schema: { box: info.schema.box },
    notes: opts.notes,
    createdAt: opts.createdAt,
    rollback: opts.rollback,
  };
}

async function sign(
  binary: string,
  opts: { key: string; notes: string; rollback: boolean; out: string },
): Promise<number> {
  if (opts.notes.length > MAX_NOTES) throw usageError(`--notes holds at most ${MAX_NOTES} characters`);
  const key = readReleaseKey(opts.key); // a wrong key file fails before the binary is run
  const info = await infoOfBinary(binary);
  const digest = await digestOf(binary);
  const manifest = manifestOf(info, digest, { ...opts, createdAt: isoOf(nowMs()) });
  const signed = signManifest(manifest, key.secretKey, key.keys);
  // What a box that trusts the key's first ancestor does with it: a key file whose rotations do not verify fails here.
  try {
    verifyRelease(signed, [signed.keys[0]?.signedBy ?? signed.publicKey]);
  } catch (err) {
    if (!(err instanceof ReleaseRefused)) throw err;
    throw new ProcessError('data', `${opts.key} signs releases no box accepts: ${err.message}`);
  }
  writeReleaseFile(opts.out, signed);
  return print(
    `signed venue-box ${manifest.version} for ${manifest.arch} (Node ${manifest.node}, box schema ${manifest.schema.box}, ` +
      `${manifest.size} bytes, sha256 ${manifest.sha256})${manifest.rollback ? ' as a rollback release' : ''}\n${opts.out}\n`,
  );
}

/** Written whole or not at all: a temp file beside it, fsynced, renamed. */
function writeReleaseFile(file: string, signed: SignedRelease): void {
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, `${JSON.stringify(signed, null, 2)}\n`, { flag: 'w' });
    fsyncPath(tmp);
    renameSync(tmp, file);
    fsyncPath(dirname(file), true);
  } catch (err) {
    throw new ProcessError('cantCreate', `cannot write ${file}: ${(err as NodeJS.ErrnoException).code ?? err}`);
  }
}

async function verify(file: string, trustedKeys: string[], binary: string | undefined): Promise<number> {
  const signed = readJson(file);
  let verified: ReturnType<typeof verifyRelease>;
  try {
    verified = verifyRelease(signed, trustedKeys);
  } catch (err) {
    if (err instanceof ReleaseRefused) throw new ProcessError('refused', `refused (${err.reason}): ${err.message}`);
    throw err;
  }
  const { manifest, trusted } = verified;
  const lines = describeRelease(manifest, signed as SignedRelease, trusted, trustedKeys);
  if (binary !== undefined) {
    const arch = archOf(binary);
    const digest = await digestOf(binary);
    const refusal =
      arch !== manifest.arch
        ? `refused (arch): ${binary} is for ${arch}, the release for ${manifest.arch}`
        : digest.size !== manifest.size
          ? `refused (size): ${binary} has ${digest.size} bytes, the release ${manifest.size}`
          : digest.sha256 !== manifest.sha256
            ? `refused (hash): ${binary}'s sha256 is ${digest.sha256}, the release's ${manifest.sha256}`
            : undefined;
    if (refusal) throw new ProcessError('refused', refusal);
    lines.push(['binary', `${binary}: size and sha256 match`]);
  }
  return print(lines.map(([k, v]) => `${k.padEnd(10)}${v}\n`).join(''));
}

function readJson(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new ProcessError('noInput', `no release file at ${file}`);
    throw new ProcessError('io', `cannot read ${file}: ${code ?? (err as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new ProcessError('data', `${file} is not a release file (not JSON)`);
  }
}

/** The lines `verify` prints about a release that verified: what it is, who signed it, what the box trusts after. */
export function describeRelease(
  manifest: ReleaseManifest,
  signed: SignedRelease,
  trustedAfter: string[],
  trustedBefore: string[],
): [string, string][] {
  const lines: [string, string][] = [
    ['release', `venue-box ${manifest.version} for ${manifest.arch}, Node ${manifest.node}`],
    ['schema', `box ${manifest.schema.box}`],
    ['size', `${manifest.size} bytes`],
    ['sha256', manifest.sha256],
    ['created', manifest.createdAt],
    ['rollback', manifest.rollback ? 'yes: boxes on newer versions install it too' : 'no'],
    ['notes', manifest.notes === '' ? '-' : manifest.notes.replace(/\s*\n\s*/g, ' / ')],
    ['signed by', signed.publicKey],
  ];
  // A rotation in the release: a box that verifies it trusts the new key from then on, and no longer the old one.
  const retired = trustedBefore.filter((k) => !trustedAfter.includes(k));
  if (retired.length > 0) {
    lines.push(['rotation', `boxes then trust ${trustedAfter.join(', ')}; they no longer trust ${retired.join(', ')}`]);
  }
  return lines;
}
