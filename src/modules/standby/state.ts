import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Static, Type } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import nacl from 'tweetnacl';
import { claimDataDir, DataDirClaimedError } from '../../db/data-dir-claim.js';
import { ProcessError } from '../../shared/errors.js';
import { writeFileDurably } from '../../shared/files.js';

/**
 * This box's own part in a pair (docs/operations.md "A standby box"): who it is (its id and Ed25519 key, never
 * replicated: each box proves itself with its own), its role and term, its peer, and the primary's one-time
 * pairing code. A file in the data directory beside the database, written atomically and synced: the database
 * is the primary's and replicated whole, this file is the box's.
 */
export const STANDBY_FILE = 'standby.json';

const Peer = Type.Object({
  boxId: Type.String(),
  /** Base64 of the peer's Ed25519 public key. */
  publicKey: Type.String(),
  /** Where the peer's box answers (http://address:port), for the stream and the peer's state. */
  url: Type.String(),
});
export type Peer = Static<typeof Peer>;

const StoredState = Type.Object({
  boxId: Type.String(),
  secretKey: Type.String(),
  /** 'primary' serves the venue; 'standby' follows its peer. A box never paired is a primary without a peer. */
  role: Type.Union([Type.Literal('primary'), Type.Literal('standby')]),
  /**
   * Raised by one at each takeover: a box never follows a primary of a lower term nor acknowledges its frames,
   * and a primary that meets a higher term stops confirming (docs/architecture.md "A standby box").
   */
  term: Type.Integer({ minimum: 0 }),
  peer: Type.Union([Peer, Type.Null()]),
  /** The primary's pairing code (scrypt-free: a SHA-256 of 40 random bits is enough for minutes and 5 tries). */
  pairing: Type.Union([
    Type.Object({ codeHash: Type.String(), expiresAt: Type.Number(), triesLeft: Type.Integer() }),
    Type.Null(),
  ]),
  lastTakeoverAt: Type.Union([Type.String(), Type.Null()]),
  /**
   * Set when a primary was fenced after confirming commands its standby never held (it went on alone, and the
   * standby took over meanwhile): at its start as the standby, its database is moved aside, not thrown away.
   */
  diverged: Type.Optional(Type.Union([Type.Object({ confirmations: Type.Integer(), at: Type.String() }), Type.Null()])),
  /** Where the last diverged database was moved to (shown by `standby status` until the next pairing). */
  divergedDir: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});
export type StandbyState = Static<typeof StoredState>;
const check = TypeCompiler.Compile(StoredState);

/** The box's pair state; a box never paired gets an identity of its own at the first look. */
export function loadStandbyState(dataDir: string): StandbyState {
  const file = join(dataDir, STANDBY_FILE);
  if (existsSync(file)) {
    const value = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    if (!check.Check(value)) throw new Error(`${file} is not a standby state file this release can read`);
    return value;
  }
  const pair = nacl.sign.keyPair();
  return {
    boxId: randomUUID(),
    secretKey: Buffer.from(pair.secretKey).toString('base64'),
    role: 'primary',
    term: 0,
    peer: null,
    pairing: null,
    lastTakeoverAt: null,
  };
}

/** Written to a temporary file, synced, renamed: a power cut leaves the old state or the new, never a mix. */
export function saveStandbyState(dataDir: string, state: StandbyState): void {
  // 0600: it holds this box's private key.
  writeFileDurably(join(dataDir, STANDBY_FILE), `${JSON.stringify(state, null, 2)}\n`, 0o600);
}

/**
 * A command that opens the database refuses to while this box follows its primary (docs/operations.md "A standby
 * box"): the copy is written behind SQLite's back by the follower, and a SQLite connection that closes last would
 * checkpoint and delete the WAL the follower is appending to. With the standby's service stopped it may.
 */
export function refuseWhileFollowing(dataDir: string, what: string): void {
  if (!existsSync(join(dataDir, STANDBY_FILE))) return;
  if (loadStandbyState(dataDir).role !== 'standby') return;
  let claim: { release(): void };
  try {
    claim = claimDataDir(dataDir);
  } catch (err) {
    if (!(err instanceof DataDirClaimedError)) throw err;
    throw new ProcessError(
      'tempFail',
      `this box is the standby: its database is the primary's copy, being written as it follows; run ${what} on the primary (or stop this box's service first)`,
    );
  }
  claim.release();
}

/** This box's key pair from its state. */
export const keysOf = (state: StandbyState): nacl.SignKeyPair =>
  nacl.sign.keyPair.fromSecretKey(Buffer.from(state.secretKey, 'base64'));

export const publicKeyOf = (state: StandbyState): string => Buffer.from(keysOf(state).publicKey).toString('base64');
