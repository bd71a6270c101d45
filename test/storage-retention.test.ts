import Database from 'better-sqlite3';
import pino from 'pino';
import { expect, test } from 'vitest';
import { migrate } from '../src/db/migrate.js';
import { createOrderRepo } from '../src/modules/ordering/repo.js';
import { createRetention } from '../src/modules/storage/retention.js';

const DAY = 86_400_000;

function setup() {
  const db = new Database(':memory:');
  migrate(db);
  const repo = createOrderRepo(db);
  const add = (id: string, processedMs: number | null) => {
    repo.insertCommand({
      correlationId: id,
      tenantId: 't',
      userId: 'u',
      staff: false,
      orderId: 'o',
      kind: 'append',
      body: { lines: [{ productId: 'woda', quantity: 1 }] },
      confirmedMs: processedMs ?? 0,
    });
    const seq = db.prepare('SELECT seq FROM order_commands WHERE correlation_id = ?').pluck().get(id) as number;
    if (processedMs !== null) repo.markProcessed(seq, 'applied', processedMs);
  };
  const left = () => db.prepare('SELECT correlation_id FROM order_commands ORDER BY seq').pluck().all() as string[];
  return { db, repo, add, left };
}

const retentionAt = (repo: ReturnType<typeof createOrderRepo>, nowMs: number) =>
  createRetention({
    pruneCommands: repo.pruneProcessedCommands,
    commandRetentionMs: 7 * DAY,
    log: pino({ level: 'silent' }),
    now: () => nowMs,
  });

test('processed commands older than the retention go, newer ones and pending ones stay', async () => {
  const { repo, add, left } = setup();
  add('old-1', 1 * DAY);
  add('old-2', 2 * DAY);
  add('recent', 9 * DAY);
  add('pending', null);
  expect(await retentionAt(repo, 10 * DAY).pruneCommands()).toBe(2);
  expect(left()).toEqual(['recent', 'pending']);
  // Far in the future: everything processed goes; a pending command never does, and it is still served to the queue.
  expect(await retentionAt(repo, 100 * DAY).pruneCommands()).toBe(1);
  expect(left()).toEqual(['pending']);
  expect(repo.pendingCommands(0, 10).map((c) => c.correlationId)).toEqual(['pending']);
});

test('the log is pruned as a prefix: nothing after a pending command goes until it is processed', async () => {
  const { db, repo, add, left } = setup();
  add('a', 1 * DAY);
  add('stuck', null);
  add('b', 1 * DAY);
  expect(await retentionAt(repo, 30 * DAY).pruneCommands()).toBe(1);
  expect(left()).toEqual(['stuck', 'b']);
  const seq = db.prepare("SELECT seq FROM order_commands WHERE correlation_id = 'stuck'").pluck().get() as number;
  repo.markProcessed(seq, 'applied', 2 * DAY);
  expect(await retentionAt(repo, 30 * DAY).pruneCommands()).toBe(2);
  expect(left()).toEqual([]);
});

test('more than one batch goes in one sweep, and an Idempotency-Key keeps answering without its command', async () => {
  const { repo, add, left } = setup();
  for (let i = 0; i < 2500; i++) add(`c${i}`, DAY);
  repo.idempotency.insert({
    tenantId: 't',
    userId: 'u',
    key: 'k',
    fingerprint: 'f',
    correlationId: 'c0',
    response: '{"correlationId":"c0"}',
    createdMs: DAY,
  });
  expect(await retentionAt(repo, 30 * DAY).pruneCommands()).toBe(2500);
  expect(left()).toEqual([]);
  expect(repo.idempotency.find('t', 'u', 'k')).toEqual({ fingerprint: 'f', response: '{"correlationId":"c0"}' });
});
