import Database from 'better-sqlite3';
import pino from 'pino';
import { afterEach, expect, test, vi } from 'vitest';
import { migrate } from '../../db/migrate.js';
import { reject } from '../../shared/errors.js';
import type { OutgoingFrame } from '../../ws/event-store.js';
import { type CommandHandler, createCommandQueue } from './command-queue.js';
import { createOrderRepo } from './repo.js';

afterEach(() => {
  vi.useRealTimers();
});

function setup(process: CommandHandler['process']) {
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
  const queue = createCommandQueue({ repo, handler, push: () => undefined, log: pino({ level: 'silent' }), now: () => 1 });
  const outcome = (id: string) =>
    db.prepare('SELECT outcome FROM order_commands WHERE correlation_id = ?').pluck().get(id) as string | null;
  return { queue, notified, outcome };
}

const record = (id: string) => ({
  correlationId: id, tenantId: 't', userId: 'u', staff: false, orderId: 'o', kind: 'new', body: {}, confirmedMs: 1,
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
  let failures = 1;
  const { queue, notified, outcome } = setup(() => {
    if (failures-- > 0) throw Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR' });
    return [];
  });
  await queue.confirm(record('c'));
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
