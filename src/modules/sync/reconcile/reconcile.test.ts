import Database from 'better-sqlite3';
import nacl from 'tweetnacl';
import { beforeEach, describe, expect, test } from 'vitest';
import { migrate } from '../../../db/migrate.js';
import { createLogger } from '../../../log.js';
import { chainHash, signDetached } from '../../../shared/sync-protocol.js';
import type { Envelope, Head, TailResponse } from '../../../shared/sync-messages.js';
import { createOutbox } from '../up/outbox.js';
import { createSyncRepo, type SyncRepo } from '../repo.js';
import { reconcile, SyncStateError } from './reconcile.js';

// The box restored from an old copy, against a central that holds 2 events more than it: those are fetched,
// checked against the box's own signature, put back, and the box's newer event follows them in a new epoch.
const keys = nacl.sign.keyPair.fromSeed(new Uint8Array(32).fill(3));
const device = { deviceId: 'd1', publicKey: keys.publicKey };
const log = createLogger('silent');
let repo: SyncRepo;
let applied: string[];
let central: { seq: number; hash: string; envelope: string }[];

const wh = (n: number) => ({ id: `w${n}`, name: `M${n}` });
/** The events as the central holds them: the box's first 3, of which the restored copy kept only the first. */
function history(): void {
  const db = new Database(':memory:');
  migrate(db);
  const r = createSyncRepo(db);
  const o = createOutbox(r);
  for (let n = 1; n <= 3; n++) o.append('t', 'warehouse.changed', `w${n}`, wh(n), n);
  central = r.after(0, 10).map((x) => ({ seq: x.seq, hash: x.chainHash, envelope: x.envelope }));
}

beforeEach(() => {
  history();
  const db = new Database(':memory:');
  migrate(db);
  repo = createSyncRepo(db);
  // The old copy: event 1 (acknowledged), then one event of its own written after the restore.
  repo.insert({
    seq: 1,
    eventId: 'e1',
    tenantId: 't',
    kind: 'warehouse.changed',
    aggregateId: 'w1',
    envelope: central[0]!.envelope,
    chainHash: central[0]!.hash,
    createdMs: 1,
  });
  repo.ack(1, central[0]!.hash, 1, []);
  createOutbox(repo).append('t', 'warehouse.changed', 'mine', { id: 'mine', name: 'new' }, 10);
  applied = [];
});

const head = (): Head => ({ epoch: 1, seq: 3, hash: central[2]!.hash });
const signedHeader = (secretKey: Uint8Array, over: Record<string, unknown> = {}) => {
  const header = JSON.stringify({ deviceId: 'd1', lastSeq: 3, lastHash: central[2]!.hash, ...over });
  return { header, signature: Buffer.from(signDetached(Buffer.from(header), secretKey)).toString('base64') };
};
const deps = (proof: TailResponse['proof'], events = central) => ({
  repo,
  log,
  now: () => 100,
  device,
  reinstate: { apply: (e: Envelope) => void applied.push(e.aggregate) },
  fetchTail: async (after: number) => ({
    head: head(),
    proof,
    events: events.filter((e) => e.seq > after).map((e) => ({ ...e, epoch: 1 })),
  }),
});

describe('reconciling with a central that is ahead', () => {
  test("with this box's signature on the head: lost events put back, its own renumbered after them in a new epoch", async () => {
    await reconcile(deps(signedHeader(keys.secretKey)), head());
    expect(applied).toEqual(['w2', 'w3']);
    const rows = repo.after(0, 10);
    expect(rows.map((r) => r.aggregateId)).toEqual(['w1', 'w2', 'w3', 'mine']);
    expect(rows[3]!.chainHash).toBe(chainHash(central[2]!.hash, rows[3]!.envelope));
    expect(repo.state()).toMatchObject({ epoch: 2, ackedSeq: 3, ackedHash: central[2]!.hash });
  });

  test.each([
    ['no proof', () => null],
    ['a proof signed by another key', () => signedHeader(nacl.sign.keyPair().secretKey)],
    ["this box's signature on another head", () => signedHeader(keys.secretKey, { lastSeq: 2 })],
    ['a proof for another device', () => signedHeader(keys.secretKey, { deviceId: 'd2' })],
  ])('with %s: refused, and nothing of the box changes', async (_what, proof) => {
    const before = repo.after(0, 10);
    await expect(reconcile(deps(proof()), head())).rejects.toThrow(SyncStateError);
    expect(applied).toEqual([]);
    expect(repo.after(0, 10)).toEqual(before);
    expect(repo.state()).toMatchObject({ epoch: 1, ackedSeq: 1 });
  });

  test("events that do not chain from the box's acknowledged position are refused before anything is applied", async () => {
    const forged = central.map((e) => (e.seq === 2 ? { ...e, envelope: e.envelope.replace('M2', 'XX') } : e));
    await expect(reconcile(deps(signedHeader(keys.secretKey), forged), head())).rejects.toThrow(
      /does not continue the chain/,
    );
    expect(applied).toEqual([]);
    expect(repo.state()).toMatchObject({ epoch: 1, ackedSeq: 1 });
  });
});
