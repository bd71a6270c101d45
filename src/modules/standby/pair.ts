import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, mkdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { type Static, Type } from '@sinclair/typebox';
import { UUID_PATTERN } from '../../shared/types.js';
import { CARRIED_FILES } from '../backup/take.js';
import { DB_FILE } from '../../db/open.js';
import { AppError, ProcessError } from '../../shared/errors.js';
import { loadStandbyState, publicKeyOf, type StandbyState, saveStandbyState } from './state.js';

/** How long a pairing code printed by `venue-box standby code` stays good, and how many wrong tries it takes. */
export const CODE_TTL_MS = 15 * 60_000;
export const CODE_TRIES = 5;

const ALPHABET = 'ABCDEFGHJKMNPQRSTVWXYZ23456789';

/** 10 characters of 30 (about 49 bits), shown as XXXXX-XXXXX: read aloud and typed on the other box. */
function newCode(): string {
  const bytes = randomBytes(10);
  const chars = [...bytes].map((b) => ALPHABET[b % ALPHABET.length]).join('');
  return `${chars.slice(0, 5)}-${chars.slice(5)}`;
}
const hashOf = (code: string): string =>
  createHash('sha256')
    .update(code.toUpperCase().replace(/[^A-Z0-9]/g, ''))
    .digest('hex');

/** `venue-box standby code` on the primary: a new one-time code (replacing any earlier one). */
export function issuePairingCode(dataDir: string, nowMs: number): { code: string; expiresAt: number } {
  const state = loadStandbyState(dataDir);
  if (state.role !== 'primary') {
    throw new ProcessError('usage', 'this box is a standby: print the code on the primary');
  }
  const code = newCode();
  const expiresAt = nowMs + CODE_TTL_MS;
  saveStandbyState(dataDir, { ...state, pairing: { codeHash: hashOf(code), expiresAt, triesLeft: CODE_TRIES } });
  return { code, expiresAt };
}

export const JoinRequest = Type.Object(
  {
    code: Type.String({ minLength: 1, maxLength: 32 }),
    boxId: Type.String({ pattern: UUID_PATTERN }),
    publicKey: Type.String({ pattern: '^[A-Za-z0-9+/]{43}=$' }),
    /** Where the standby's box will answer (its own address, not the floating one): http://host:port. */
    url: Type.String({ pattern: '^https?://[^/?#\\s]+$', maxLength: 200 }),
    version: Type.String({ maxLength: 64 }),
    schema: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false },
);
export type JoinRequest = Static<typeof JoinRequest>;

export const JoinResponse = Type.Object({
  boxId: Type.String(),
  publicKey: Type.String(),
  term: Type.Integer(),
  version: Type.String(),
  schema: Type.Integer(),
});
export type JoinResponse = Static<typeof JoinResponse>;

/**
 * The primary's side of `venue-box standby join`: the code must be the one printed, unexpired, within its tries
 * (each wrong one costs a try, saved before the answer); then the standby's key and address are the peer's.
 */
export function acceptJoin(
  dataDir: string,
  req: JoinRequest,
  release: { version: string; schema: number },
  nowMs: number,
): { state: StandbyState; response: JoinResponse } {
  const state = loadStandbyState(dataDir);
  if (state.role !== 'primary') throw AppError.of('conflict', 'this box is a standby: join its primary instead');
  const pairing = state.pairing;
  if (!pairing || pairing.expiresAt <= nowMs || pairing.triesLeft <= 0) {
    throw AppError.of('forbidden', 'no pairing code is open on this box: run `venue-box standby code` on it');
  }
  const given = Buffer.from(hashOf(req.code), 'hex');
  if (!timingSafeEqual(given, Buffer.from(pairing.codeHash, 'hex'))) {
    const triesLeft = pairing.triesLeft - 1;
    saveStandbyState(dataDir, { ...state, pairing: triesLeft > 0 ? { ...pairing, triesLeft } : null });
    throw AppError.of('forbidden', 'wrong pairing code');
  }
  if (req.schema < release.schema) {
    throw AppError.of(
      'conflict',
      `the standby runs release ${req.version} (database schema ${req.schema}); this primary runs ${release.version} (schema ${release.schema}): update the standby first`,
    );
  }
  const next: StandbyState = {
    ...state,
    peer: { boxId: req.boxId, publicKey: req.publicKey, url: req.url },
    pairing: null,
  };
  saveStandbyState(dataDir, next);
  return {
    state: next,
    response: {
      boxId: state.boxId,
      publicKey: publicKeyOf(state),
      term: state.term,
      version: release.version,
      schema: release.schema,
    },
  };
}

/**
 * The standby's side, before its box starts: what its data directory held is moved aside (it will hold the
 * primary's copy), and the primary becomes its peer.
 */
export async function joinPrimary(o: {
  dataDir: string;
  primaryUrl: string;
  code: string;
  selfUrl: string;
  release: { version: string; schema: number };
  nowMs: number;
  timeoutMs?: number;
}): Promise<{ state: StandbyState; movedTo?: string }> {
  const state = loadStandbyState(o.dataDir);
  const body: JoinRequest = {
    code: o.code,
    boxId: state.boxId,
    publicKey: publicKeyOf(state),
    url: o.selfUrl,
    version: o.release.version,
    schema: o.release.schema,
  };
  let res: Response;
  try {
    res = await fetch(`${o.primaryUrl.replace(/\/$/, '')}/standby-api/join`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(o.timeoutMs ?? 10_000),
    });
  } catch (err) {
    throw new ProcessError('unavailable', `cannot reach the primary at ${o.primaryUrl}: ${(err as Error).message}`);
  }
  const answer = (await res.json().catch(() => ({}))) as { message?: string } & Partial<JoinResponse>;
  if (!res.ok) {
    throw new ProcessError(
      res.status >= 400 && res.status < 500 ? 'refused' : 'unavailable',
      `the primary refused: ${answer.message ?? res.status}`,
    );
  }
  const movedTo = moveAside(o.dataDir, o.nowMs);
  const next: StandbyState = {
    ...state,
    role: 'standby',
    term: answer.term!,
    peer: { boxId: answer.boxId!, publicKey: answer.publicKey!, url: o.primaryUrl.replace(/\/$/, '') },
    pairing: null,
    diverged: null,
    divergedDir: null,
  };
  saveStandbyState(o.dataDir, next);
  return { state: next, movedTo };
}

/** A box's own database and key files go to DIR/<prefix>-<time>: a standby's copy is the primary's. */
export function moveAside(dataDir: string, nowMs: number, prefix = 'replaced'): string | undefined {
  const names = [DB_FILE, `${DB_FILE}-wal`, `${DB_FILE}-shm`, ...CARRIED_FILES].filter((n) =>
    existsSync(join(dataDir, n)),
  );
  if (names.length === 0) return undefined;
  const dir = join(dataDir, `${prefix}-${new Date(nowMs).toISOString().replace(/[:.]/g, '-')}`);
  mkdirSync(dir, { recursive: true });
  for (const n of names) renameSync(join(dataDir, n), join(dir, n));
  return dir;
}
