import nacl from 'tweetnacl';
import { describe, expect, test } from 'vitest';
import {
  BatchFormatError,
  batchParts,
  chainHash,
  chainOf,
  decodeBatch,
  encodeBatch,
  envelopeText,
  GENESIS_HASH,
  keyIdOf,
  signDetached,
  verifyDetached,
} from './sync-protocol.js';
import type { BatchHeader } from './sync-messages.js';

const pair = nacl.sign.keyPair.fromSeed(new Uint8Array(32).fill(7));
const envelopes = [1, 2, 3].map((n) =>
  envelopeText(
    {
      eventId: `0000000${n}-0000-7000-8000-000000000000`,
      tenant: 't',
      aggregate: `o${n}`,
      kind: 'order.changed',
      boxTime: '2026-11-23T12:00:00.000Z',
    },
    `{"n":${n},"text":"Żurek\\nline"}`,
  ),
);
const header: BatchHeader = {
  protocol: 1,
  schema: 1,
  tenant: 't',
  deviceId: 'd',
  keyId: keyIdOf(pair.publicKey),
  epoch: 1,
  firstSeq: 1,
  lastSeq: 3,
  prevHash: GENESIS_HASH,
  lastHash: chainOf(GENESIS_HASH, envelopes),
  pendingSeq: 3,
  sentAt: '2026-11-23T12:00:00.000Z',
};

describe('sync protocol', () => {
  test('an envelope is one line of JSON with the body as given, and the chain covers its exact bytes', () => {
    expect(envelopes[0]).not.toContain('\n');
    expect(JSON.parse(envelopes[0]!)).toMatchObject({
      stream: 'order',
      kind: 'order.changed',
      schema: 1,
      body: { n: 1, text: 'Żurek\nline' },
    });
    const h1 = chainHash(GENESIS_HASH, envelopes[0]!);
    expect(h1).toMatch(/^[0-9a-f]{64}$/);
    expect(chainHash(GENESIS_HASH, envelopes[0]!.replace('"n":1', '"n": 1'))).not.toBe(h1);
    expect(chainOf(h1, envelopes.slice(1))).toBe(header.lastHash);
  });

  test('a batch survives the wire byte for byte, and a signature made by tweetnacl verifies with node:crypto', () => {
    const headerText = JSON.stringify(header);
    const signature = signDetached(Buffer.from(headerText), pair.secretKey);
    const decoded = decodeBatch(encodeBatch(headerText, signature, envelopes));
    expect(decoded.headerText).toBe(headerText);
    expect(decoded.envelopes).toEqual(envelopes);
    expect(verifyDetached(Buffer.from(decoded.headerText), decoded.signature, pair.publicKey)).toBe(true);
    expect(chainOf(decoded.header.prevHash, decoded.envelopes)).toBe(decoded.header.lastHash);
    // One byte changed in the header, or another key: refused.
    expect(
      verifyDetached(Buffer.from(headerText.replace('"epoch":1', '"epoch":2')), decoded.signature, pair.publicKey),
    ).toBe(false);
    expect(verifyDetached(Buffer.from(headerText), decoded.signature, nacl.sign.keyPair().publicKey)).toBe(false);
    expect(verifyDetached(Buffer.from(headerText), decoded.signature.subarray(1), pair.publicKey)).toBe(false);
  });

  test('a batch written in parts is the same bytes as the batch encoded at once', () => {
    const signature = signDetached(Buffer.from('h'), pair.secretKey);
    const chunks = [Buffer.from(envelopes.slice(0, 2).join('\n')), Buffer.from(envelopes[2]!)];
    expect(Buffer.concat(batchParts('h', signature, chunks))).toEqual(encodeBatch('h', signature, envelopes));
    expect(decodeBatch(Buffer.concat(batchParts(JSON.stringify(header), signature, chunks))).envelopes).toEqual(
      envelopes,
    );
  });

  test('malformed batches are refused with a reason', () => {
    const sig = Buffer.from(signDetached(Buffer.from('x'), pair.secretKey)).toString('base64');
    const bad = (text: string) => () => decodeBatch(Buffer.from(text));
    expect(bad('only a line')).toThrow(BatchFormatError);
    expect(bad(`not json\n${sig}\n{}`)).toThrow(/not JSON/);
    expect(bad(`${JSON.stringify({ ...header, firstSeq: 0 })}\n${sig}\n{}`)).toThrow(/firstSeq/);
    expect(bad(`${JSON.stringify({ ...header, lastSeq: 0 })}\n${sig}\n{}`)).toThrow(/firstSeq..lastSeq/);
    expect(bad(`${JSON.stringify({ ...header, prevHash: 'abc' })}\n${sig}\n{}`)).toThrow(/prevHash/);
    expect(bad(`${JSON.stringify({ ...header, tenant: 5 })}\n${sig}\n{}`)).toThrow(/tenant/);
    expect(bad(`[1]\n${sig}\n{}`)).toThrow(/not an object/);
    expect(bad(`${JSON.stringify(header)}\nnot-a-signature\n{}`)).toThrow(/signature/);
  });
});
