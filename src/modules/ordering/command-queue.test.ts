import Database from 'better-sqlite3';
import pino from 'pino';
import { afterEach, expect, test, vi } from 'vitest';
import { migrate } from '../../db/migrate.js';
import { reject } from '../../shared/errors.js';
import type { OutgoingFrame } from '../events/event-store.js';
import { type CommandHandler, createCommandQueue, type ProcessedCommand, type QueueObserver } from './command-queue.js';
import { createOrderRepo } from './repo.js';
import { createSyncRounds, noWalSync, type WalSync } from '../../db/wal-sync.js';
import { createPublisher } from '../events/publisher.js';

afterEach(() => {
  vi.useRealTimers();
});

function setup(process: CommandHandler['process'], observer?: QueueObserver, sync: WalSync = noWalSync) {
  const db = new Database(':memory:');
  migrate(db);
  const repo = createOrderRepo(db);
  const notified: string[] = [];
  const handler: CommandHandler = {
    process,
    notify: (cmd, codes) => {
      notified.push(`${cmd.correlationId}:${codes[0]!.code}`);
      return [] as OutgoingFrame[];
    },
  };
  const pushed: string[] = [];
  const publisher = createPublisher(sync, {
    hold: () => undefined,
    push: (frames) => pushed.push(...frames.map((f) => f.text)),
  });
  const queue = createCommandQueue({
    repo,
    handler,
    publisher,
    log: pino({ level: 'silent' }),
    now: () => 1,
    observer,
  });
  const outcome = (id: string) =>
    db.prepare('SELECT outcome FROM order_commands WHERE correlation_id = ?').pluck().get(id) as string | null;
  return { queue, notified, outcome, pushed, repo };
}

const record = (id: string) => ({
  correlationId: id,
  tenantId: 't',
  userId: 'u',
  staff: false,
  orderId: 'o',
  kind: 'new',
  body: {},
  confirmedMs: 1,
});

test('a rejected command is marked rejected and notified; the next one still applies', async () => {
  const { queue, notified, outcome } = setup((cmd) => {
    if (cmd.correlationId === 'a') throw reject('invalidVenue', 'no');
    return [];
  });
  await Promise.all([queue.confirm(record('a')), queue.confirm(record('b'))]);
  queue.drain();
  expect([outcome('a'), outcome('b')]).toEqual(['rejected', 'applied']);
  expect(notified).toEqual(['a:invalidVenue']);
});

test('a disk or I/O error is not blamed on the command: it stays pending and is applied on retry', async () => {
  // It fails when applied with its batch (the command is then stored alone and confirmed) and at the first retry.
  let failures = 2;
  const { queue, notified, outcome } = setup(() => {
    if (failures-- > 0) throw Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR' });
    return [];
  });
  await queue.confirm(record('c'));
  expect(outcome('c')).toBeNull();
  expect(queue.failing()).toBe(true);
  queue.drain();
  expect(outcome('c')).toBeNull();
  expect(notified).toEqual([]);
  queue.drain();
  expect(outcome('c')).toBe('applied');
  queue.stop();
});

test('any other error fails only that command, with an internal NOTIFICATION', async () => {
  const { queue, notified, outcome } = setup(() => {
    throw new TypeError('bug');
  });
  await queue.confirm(record('d'));
  queue.drain();
  expect(outcome('d')).toBe('failed');
  expect(notified).toEqual(['d:internal']);
});

test('the observer hears each committed batch once, after its commit; a batch the database refused is not reported', async () => {
  const heard: string[] = [];
  let seconds: number[] = [];
  const observer: QueueObserver = {
    confirmed: (kinds, transaction, commit) => {
      heard.push(`confirmed ${kinds.join(',')}`);
      seconds.push(transaction, commit);
    },
    processed: (cmds: readonly ProcessedCommand[], _t, _c, pushedMs) =>
      heard.push(`processed ${cmds.map((c) => `${c.kind}:${c.outcome}:${pushedMs - c.confirmedMs}`).join(',')}`),
  };
  // z fails when applied with its batch and at the first retry (see the test above).
  let ioErrors = 2;
  const { queue } = setup((cmd) => {
    if (cmd.correlationId === 'x') throw reject('invalidVenue', 'no');
    if (cmd.correlationId === 'z' && ioErrors-- > 0)
      throw Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR' });
    return [];
  }, observer);
  await Promise.all([queue.confirm(record('w')), queue.confirm({ ...record('x'), kind: 'append' })]);
  queue.drain();
  expect(heard).toEqual(['confirmed new,append', 'processed new:applied:0,append:rejected:0']);
  expect(seconds.every((s) => s >= 0 && s < 5)).toBe(true);
  expect(seconds[1]).toBeLessThanOrEqual(seconds[0]!);
  expect(queue.failing()).toBe(false);

  heard.length = 0;
  seconds = [];
  await queue.confirm(record('z'));
  queue.drain();
  expect(heard).toEqual(['confirmed new']);
  expect(queue.failing()).toBe(true);
  queue.drain();
  expect(heard).toEqual(['confirmed new', 'processed new:applied:0']);
  expect(queue.failing()).toBe(false);
  queue.stop();
});

test('a command is stored and applied in one transaction; its 200 and its frames wait for the fsync of the WAL', async () => {
  let finish: (err?: Error) => void = () => undefined;
  const sync = createSyncRounds(
    () =>
      new Promise<void>((resolve, reject) => {
        finish = (err) => (err ? reject(err) : resolve());
      }),
  );
  const frame = (id: string): OutgoingFrame => ({ tenantId: 't', stream: 'u', seq: 1, text: `frame of ${id}` });
  const { queue, outcome, pushed } = setup((cmd) => [frame(cmd.correlationId)], undefined, sync);
  let confirmed = false;
  const first = queue.confirm(record('e')).then(() => {
    confirmed = true;
  });
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setImmediate(r));
  // Committed (a read sees it) but neither answered nor pushed: a power cut now may still take it back.
  expect(outcome('e')).toBe('applied');
  expect(confirmed).toBe(false);
  expect(pushed).toEqual([]);
  finish();
  await first;
  expect(pushed).toEqual(['frame of e']);

  const second = queue.confirm(record('f'));
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setImmediate(r));
  finish(Object.assign(new Error('EIO'), { code: 'EIO' }));
  await expect(second).rejects.toMatchObject({ code: 'EIO' });
});

test('commands confirmed while a batch waits for its fsync gather and commit together once it is done', async () => {
  let finish: () => void = () => undefined;
  const sync = createSyncRounds(
    () =>
      new Promise<void>((resolve) => {
        finish = resolve;
      }),
  );
  const batches: string[] = [];
  const observer: QueueObserver = { confirmed: (kinds) => batches.push(kinds.join(',')), processed: () => undefined };
  const { queue, outcome } = setup(() => [], observer, sync);
  const first = queue.confirm(record('g'));
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setImmediate(r));
  const later = [queue.confirm({ ...record('h'), kind: 'append' }), queue.confirm({ ...record('i'), kind: 'submit' })];
  await new Promise((r) => setImmediate(r));
  // Not committed yet: the fsync of g's batch is still in flight.
  expect(outcome('h')).toBeUndefined();
  finish();
  await first;
  expect(batches).toEqual(['new']);
  await new Promise((r) => setImmediate(r));
  expect([outcome('h'), outcome('i')]).toEqual(['applied', 'applied']);
  finish();
  await Promise.all(later);
  expect(batches).toEqual(['new', 'append,submit']);
});

test('held for the quiet moment a checkpoint asks for, the queue commits nothing; released, what gathered commits at once', async () => {
  const { queue, outcome } = setup(() => []);
  queue.hold();
  const confirmed = queue.confirm(record('j'));
  await new Promise((r) => setTimeout(r, 5));
  expect(outcome('j')).toBeUndefined();
  queue.release();
  expect(outcome('j')).toBe('applied');
  await confirmed;
});

test("a drain asked for during the quiet moment (the sync inbox's) waits for the release, then applies what is pending", async () => {
  const { queue, outcome, repo } = setup(() => []);
  queue.hold();
  repo.insertCommand(record('k'));
  let drained = false;
  const done = queue.drain().then(() => {
    drained = true;
  });
  await new Promise((r) => setTimeout(r, 5));
  // Stored by its writer, not applied: the quiet moment is not cut short.
  expect(outcome('k')).toBeNull();
  expect(drained).toBe(false);
  queue.release();
  expect(outcome('k')).toBe('applied');
  await done;
  expect(drained).toBe(true);
});

test('a retry due during the quiet moment waits for the release too', async () => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  let failures = 1;
  const { queue, outcome } = setup(() => {
    if (failures-- > 0) throw Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR' });
    return [];
  });
  await queue.confirm(record('m'));
  expect(outcome('m')).toBeNull();
  queue.hold();
  // The retry's timer fires (one second) and its processing is scheduled, but commits nothing while held.
  vi.advanceTimersByTime(1_100);
  await new Promise((r) => setImmediate(r));
  expect(outcome('m')).toBeNull();
  queue.release();
  await new Promise((r) => setImmediate(r));
  expect(outcome('m')).toBe('applied');
  queue.stop();
});
