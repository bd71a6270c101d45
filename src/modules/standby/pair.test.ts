import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { AppError } from '../../shared/errors.js';
import { acceptJoin, CODE_TRIES, CODE_TTL_MS, issuePairingCode, type JoinRequest } from './pair.js';
import { loadStandbyState } from './state.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const dataDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'vb-pair-'));
  dirs.push(d);
  return d;
};
const RELEASE = { version: '2.0.0', schema: 13 };
const join_ = (code: string, schema = 13): JoinRequest => ({
  code,
  boxId: '6f1c2b9e-8a1d-4c57-9a55-1b3f9e0c2d41',
  publicKey: Buffer.alloc(32, 7).toString('base64'),
  url: 'http://192.168.1.12:8080',
  version: schema === 13 ? '2.0.0' : '1.0.0',
  schema,
});
const refusal = (fn: () => unknown): { status: number; message: string } => {
  try {
    fn();
  } catch (err) {
    if (err instanceof AppError) return { status: err.status, message: err.message };
    throw err;
  }
  throw new Error('not refused');
};

test('the printed code pairs once; typed with dashes or spaces in any case', () => {
  const dir = dataDir();
  const { code } = issuePairingCode(dir, 1000);
  const joined = acceptJoin(dir, join_(` ${code.toLowerCase().replace('-', ' ')} `), RELEASE, 2000);
  expect(joined.state.peer).toMatchObject({ url: 'http://192.168.1.12:8080' });
  expect(loadStandbyState(dir).pairing).toBeNull();
  // Used: a second join with it finds no open code.
  expect(refusal(() => acceptJoin(dir, join_(code), RELEASE, 3000))).toMatchObject({ status: 403 });
});

test(`a wrong code costs one of ${CODE_TRIES} tries; then the code is gone, right or not`, () => {
  const dir = dataDir();
  const { code } = issuePairingCode(dir, 0);
  for (let i = 1; i <= CODE_TRIES; i++) {
    expect(refusal(() => acceptJoin(dir, join_('AAAAA-BBBBB'), RELEASE, 1))).toEqual({
      status: 403,
      message: 'wrong pairing code',
    });
    expect(loadStandbyState(dir).pairing?.triesLeft ?? 0).toBe(CODE_TRIES - i);
  }
  expect(refusal(() => acceptJoin(dir, join_(code), RELEASE, 1)).message).toMatch(/no pairing code is open/);
});

test('an expired code, and a standby whose release is older than the primary database, are refused', () => {
  const dir = dataDir();
  const { code } = issuePairingCode(dir, 0);
  expect(refusal(() => acceptJoin(dir, join_(code), RELEASE, CODE_TTL_MS)).message).toMatch(/no pairing code is open/);
  const again = issuePairingCode(dir, CODE_TTL_MS);
  expect(refusal(() => acceptJoin(dir, join_(again.code, 12), RELEASE, CODE_TTL_MS + 1))).toEqual({
    status: 409,
    message:
      'the standby runs release 1.0.0 (database schema 12); this primary runs 2.0.0 (schema 13): update the standby first',
  });
});
