import Database from 'better-sqlite3';
import pino from 'pino';
import { expect, test } from 'vitest';
import { migrate } from '../../db/migrate.js';
import { AppError } from '../../shared/errors.js';
import { createCommandQueue } from './command-queue.js';
import { noWalSync } from '../../db/wal-sync.js';
import { createPublisher } from '../events/publisher.js';
import { createIdempotencyGuard, fingerprintOf, idempotencyOf } from './idempotency.js';
import { createOrderRepo } from './repo.js';

test('the fingerprint ignores whitespace and key order, not values or the path', () => {
  const a = fingerprintOf('/p', JSON.parse('{"a": 1, "b": [{"x": "1", "y": null}]}'));
  expect(fingerprintOf('/p', JSON.parse('{"b":[{"y":null,"x":"1"}],"a":1.0}'))).toBe(a);
  expect(fingerprintOf('/p', { a: 1, b: [{ x: 1, y: null }] })).not.toBe(a);
  expect(fingerprintOf('/q', { a: 1, b: [{ x: '1', y: null }] })).not.toBe(a);
  // An absent body is the empty object, as the commands with an optional body read it.
  expect(fingerprintOf('/p', undefined)).toBe(fingerprintOf('/p', {}));
});

test('the header: optional, 1 to 255 visible ASCII characters', () => {
  expect(idempotencyOf({}, '/p', {})).toBeUndefined();
  expect(idempotencyOf({ 'idempotency-key': `${'!~'.repeat(127)}k` }, '/p', {})?.key).toHaveLength(255);
  for (const bad of ['', 'k'.repeat(256), 'a b', 'a\u0000b', 'zażółć', 'a, a']) {
    expect(() => idempotencyOf({ 'idempotency-key': bad }, '/p', {}), bad).toThrow(AppError);
  }
});

function setup() {
  const db = new Database(':memory:');
  migrate(db);
  const repo = createOrderRepo(db);
  const queue = createCommandQueue({
    repo,
    handler: { process: () => [], notify: () => [] },
    publisher: createPublisher(noWalSync, { hold: () => undefined, push: () => undefined }),
    log: pino({ level: 'silent' }),
    now: () => 1,
  });
  const guard = createIdempotencyGuard(repo.idempotency);
  let n = 0;
  /** What the service does for one request: a fresh command, queued with its key. */
  const request = (key: string, fingerprint: string) =>
    guard.once('t', 'u', { key, fingerprint }, () => {
      const correlationId = `c${++n}`;
      const response = JSON.stringify({ correlationId });
      const record = {
        correlationId,
        tenantId: 't',
        userId: 'u',
        staff: false,
        orderId: 'o',
        kind: 'new',
        body: {},
        confirmedMs: 1,
      };
      return queue
        .confirm(record, { tenantId: 't', userId: 'u', key, fingerprint, correlationId, response, createdMs: 1 })
        .then(() => response);
    });
  const count = (table: string) => db.prepare(`SELECT count(*) FROM ${table}`).pluck().get();
  return { request, count };
}

test('duplicates in the same tick: one command queued, both answered with its confirmation', async () => {
  const { request, count } = setup();
  const first = request('k', 'f');
  const second = request('k', 'f');
  // Another body under the key while the first is in flight: refused at once.
  expect(() => request('k', 'g')).toThrow(expect.objectContaining({ status: 422 }));
  expect(await Promise.all([first, second])).toEqual(['{"correlationId":"c1"}', '{"correlationId":"c1"}']);
  expect([count('order_commands'), count('idempotency_keys')]).toEqual([1, 1]);
  // Once committed, the stored row answers.
  expect(await request('k', 'f')).toBe('{"correlationId":"c1"}');
  expect(() => request('k', 'g')).toThrow(expect.objectContaining({ status: 422 }));
  expect(count('order_commands')).toBe(1);
});
