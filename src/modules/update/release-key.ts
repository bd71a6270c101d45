import { statSync, closeSync, fsyncSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { Type } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import nacl from 'tweetnacl';
import { ProcessError } from '../../shared/errors.js';
import { fsyncPath } from '../../shared/files.js';
import { publicKeyOf, signRotation } from '../../shared/release.js';
import { KeyRotation, PUBLIC_KEY_PATTERN } from '../../shared/release-schemas.js';

/**
 * Headquarters' release key files (docs/operations.md "Updating boxes"), kept offline: the Ed25519 key pair that
 * signs releases and the rotations that lead to it from the first key boxes were given. `venue-box release
 * keygen` writes one, `rotate` writes the next, `sign` reads one. The secret half never appears in a message:
 * errors about a key file name the file and what is wrong with it, never its text.
 */

export const RELEASE_KEY_TYPE = 'venue-box release key';
/** SignedRelease carries at most 32 rotations. */
export const MAX_ROTATIONS = 32;

const KeyFile = Type.Object(
  {
    type: Type.Literal(RELEASE_KEY_TYPE),
    publicKey: Type.String({ pattern: PUBLIC_KEY_PATTERN }),
    secretKey: Type.String({ pattern: '^[A-Za-z0-9+/]{86}==$' }),
    keys: Type.Array(KeyRotation, { maxItems: MAX_ROTATIONS }),
  },
  { additionalProperties: false },
);
const KEY_FILE = TypeCompiler.Compile(KeyFile);

export interface ReleaseKey {
  publicKey: string;
  /** tweetnacl's 64 bytes: the seed, then the public key. */
  secretKey: Uint8Array;
  /** The rotations from the first key to this one, oldest first; empty for a first key. */
  keys: KeyRotation[];
}

/** A new release key; after `previous`, vouched for by it (its chain plus one rotation). */
export function newReleaseKey(previous?: ReleaseKey): ReleaseKey {
  if (previous && previous.keys.length >= MAX_ROTATIONS) {
    throw new ProcessError('data', `the key has been rotated ${MAX_ROTATIONS} times, as many as a release can carry`);
  }
  const pair = nacl.sign.keyPair();
  const publicKey = Buffer.from(pair.publicKey).toString('base64');
  const keys = previous ? [...previous.keys, signRotation(previous.secretKey, publicKey)] : [];
  return { publicKey, secretKey: pair.secretKey, keys };
}

/** The key file's text: JSON, one field a line, ending in a newline. */
export function releaseKeyText(key: ReleaseKey): string {
  const file = {
    type: RELEASE_KEY_TYPE,
    publicKey: key.publicKey,
    secretKey: Buffer.from(key.secretKey).toString('base64'),
    keys: key.keys,
  };
  return `${JSON.stringify(file, null, 2)}\n`;
}

/** The key in a key file's text; a ProcessError('data') saying what is wrong (never quoting the text) otherwise. */
export function parseReleaseKey(text: string, file: string): ReleaseKey {
  const notKey = (why: string) => new ProcessError('data', `${file} is not a venue-box release key file: ${why}`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // JSON.parse's message quotes the text around the error: the secret key, maybe.
    throw notKey('it is not JSON');
  }
  if (!KEY_FILE.Check(json)) {
    const first = KEY_FILE.Errors(json).First();
    throw notKey(first ? `${first.path || '/'} ${first.message}` : 'unexpected content');
  }
  const secretKey = new Uint8Array(Buffer.from(json.secretKey, 'base64'));
  if (publicKeyOf(secretKey) !== json.publicKey) throw notKey('its publicKey is not the public half of its secretKey');
  // The chain must lead from the oldest key to this one, each rotation signed by the key before it.
  let previous: string | undefined;
  for (const [i, rotation] of json.keys.entries()) {
    if (previous !== undefined && rotation.signedBy !== previous) {
      throw notKey(`rotation ${i + 1} is signed by another key than the one rotation ${i} introduced`);
    }
    previous = rotation.publicKey;
  }
  if (previous !== undefined && previous !== json.publicKey) throw notKey('its last rotation introduces another key');
  return { publicKey: json.publicKey, secretKey, keys: json.keys };
}

export function readReleaseKey(file: string): ReleaseKey {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new ProcessError('noInput', `no release key file at ${file}`);
    if (code === 'EISDIR') throw new ProcessError('data', `${file} is a directory, not a release key file`);
    throw new ProcessError('io', `cannot read ${file}: ${code ?? (err as Error).message}`);
  }
  const key = parseReleaseKey(text, file);
  // As ssh with a private key: a release key others can read is not used (it signs what every box runs).
  const mode = statSync(file).mode & 0o777;
  if ((mode & 0o077) !== 0) {
    throw new ProcessError(
      'data',
      `${file} can be read by others (mode ${mode.toString(8).padStart(4, '0')}): chmod 600 it, and keep it offline`,
    );
  }
  return key;
}

/**
 * Writes a key file that did not exist (never over another key: a lost key cannot be made again), readable by its
 * owner only, fsynced with its directory entry.
 */
export function writeReleaseKey(file: string, key: ReleaseKey): void {
  let fd: number;
  try {
    fd = openSync(file, 'wx', 0o600);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') {
      throw new ProcessError('cantCreate', `${file} exists already: a release key file is never overwritten`);
    }
    throw new ProcessError('cantCreate', `cannot create ${file}: ${code ?? (err as Error).message}`);
  }
  try {
    try {
      writeSync(fd, releaseKeyText(key));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    fsyncPath(dirname(file), true);
  } catch (err) {
    unlinkSync(file); // half a key is no key
    throw new ProcessError('io', `cannot write ${file}: ${(err as NodeJS.ErrnoException).code ?? 'write failed'}`);
  }
}
