import { expect, test } from 'vitest';
import { DROPPED, pumpReplay, type ReplayState } from './replay.js';

const stored = Array.from({ length: 100 }, (_, i) => ({
  seq: i + 1,
  text: `{"type":"ORDER_CHANGE","seq":${i + 1},"payload":{"id":"o${i + 1}","pad":"${'x'.repeat(1000)}"}}`,
}));
const page = (after: number, limit: number) => stored.filter((r) => r.seq > after).slice(0, limit);
const options = { page, pageBytes: 8 * 1024, maxFrameBytes: 64 * 1024, maxReplayBytes: 1024 * 1024 };

function fakeWire() {
  const sent: string[] = [];
  return {
    sent,
    buffered: 0,
    status: 1,
    send(frame: Buffer) {
      sent.push(frame.toString());
      return this.status;
    },
    held() {
      return this.buffered > 0;
    },
    cork(fn: () => void) {
      fn();
    },
  };
}
const state = (cursor: number): ReplayState => ({ cursor, replaying: true, replayedBytes: 0 });

test('an empty buffer takes the whole replay, in order, then the socket goes live', () => {
  const ws = fakeWire();
  const s = state(10);
  expect(pumpReplay(ws, s, options)).toBe('live');
  expect(ws.sent.map((t) => JSON.parse(t).seq)).toEqual(stored.slice(10).map((r) => r.seq));
  expect(s).toMatchObject({ cursor: 100, replaying: false });
});

test('a page goes out, then the replay waits for the buffer to drain and resumes after the last frame sent', () => {
  const ws = fakeWire();
  const s = state(0);
  const realSend = ws.send.bind(ws);
  ws.send = (frame: Buffer) => {
    ws.buffered = 5000;
    return realSend(frame);
  };
  expect(pumpReplay(ws, s, options)).toBe('wait');
  const firstPage = ws.sent.length;
  expect(firstPage).toBeGreaterThan(0);
  expect(firstPage).toBeLessThan(20);
  expect(s.cursor).toBe(firstPage);
  ws.buffered = 0;
  ws.send = realSend;
  expect(pumpReplay(ws, s, options)).toBe('live');
  expect(ws.sent.map((t) => JSON.parse(t).seq)).toEqual(stored.map((r) => r.seq));
});

test('a frame over the limit is replayed as ORDER_TOO_LARGE with its own seq', () => {
  const ws = fakeWire();
  expect(pumpReplay(ws, state(98), { ...options, maxFrameBytes: 500 })).toBe('live');
  expect(ws.sent.map((t) => JSON.parse(t))).toEqual([
    { type: 'ORDER_TOO_LARGE', seq: 99, payload: { orderId: 'o99' } },
    { type: 'ORDER_TOO_LARGE', seq: 100, payload: { orderId: 'o100' } },
  ]);
});

test('a dropped frame or a replay past its bytes is too slow', () => {
  const ws = fakeWire();
  ws.status = DROPPED;
  expect(pumpReplay(ws, state(0), options)).toBe('tooSlow');
  expect(pumpReplay(fakeWire(), state(0), { ...options, maxReplayBytes: 20_000 })).toBe('tooSlow');
});
