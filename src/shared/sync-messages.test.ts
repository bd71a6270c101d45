import { describe, expect, test } from 'vitest';
import { Order } from './order-schemas.js';
import { BatchHeader, ENVELOPE_KINDS, ENVELOPES, problemOf, SYNC_CHECKS, SYNC_SCHEMAS } from './sync-messages.js';
import { GENESIS_HASH } from './sync-protocol.js';

const requiredOf = (schema: { required?: string[] }): string[] => schema.required ?? [];

describe('sync messages', () => {
  test("what an order.changed requires of its order, the box's Order always has (the box sends its Order)", () => {
    const orderOfEvent = ENVELOPES['order.changed'].body.properties.order;
    expect(requiredOf(orderOfEvent)).toContain('created');
    for (const field of requiredOf(orderOfEvent)) expect(requiredOf(Order)).toContain(field);
  });

  test('every kind has a compiled check of its body and a documented schema', () => {
    for (const kind of Object.keys(ENVELOPE_KINDS) as (keyof typeof ENVELOPE_KINDS)[]) {
      expect(SYNC_CHECKS.body[kind]).toBeDefined();
      expect(SYNC_SCHEMAS[`Event_${kind.replace('.', '_')}`]).toMatchObject({ description: ENVELOPES[kind].summary });
    }
  });

  test('a header is checked by its schema, with the failing field named', () => {
    const header = {
      protocol: 1,
      schema: 1,
      tenant: 't',
      deviceId: 'd',
      keyId: 'k',
      epoch: 1,
      firstSeq: 1,
      lastSeq: 1,
      prevHash: GENESIS_HASH,
      lastHash: GENESIS_HASH,
      pendingSeq: 1,
      sentAt: 'now',
    };
    expect(problemOf(SYNC_CHECKS.header, header)).toBeUndefined();
    expect(problemOf(SYNC_CHECKS.header, { ...header, epoch: 2 ** 53 })).toMatch(/^\/epoch: /);
    expect(problemOf(SYNC_CHECKS.header, { ...header, keyId: 'k'.repeat(65) })).toMatch(/^\/keyId: /);
    expect(Object.keys(BatchHeader.properties)).toEqual(Object.keys(header));
  });

  test("the box's checks of the central's answers: a head, an acknowledgement", () => {
    const head = { epoch: 1, seq: 3, hash: GENESIS_HASH };
    expect(SYNC_CHECKS.hello.Check({ head, serverTimeMs: 1, protocols: [1], schema: 1 })).toBe(true);
    expect(SYNC_CHECKS.hello.Check({ head: { ...head, hash: 'x' }, serverTimeMs: 1, protocols: [1], schema: 1 })).toBe(
      false,
    );
    expect(
      SYNC_CHECKS.ack.Check({
        ackedSeq: 3,
        ackedHash: GENESIS_HASH,
        deadLetters: [{ seq: 2, eventId: 'e', reason: 'r' }],
      }),
    ).toBe(true);
    expect(
      SYNC_CHECKS.ack.Check({
        ackedSeq: 3,
        ackedHash: GENESIS_HASH,
        deadLetters: [{ seq: -1, eventId: 'e', reason: 'r' }],
      }),
    ).toBe(false);
  });
});
