import { expect, test } from 'vitest';
import { createSyncRounds } from '../../db/wal-sync.js';
import type { OutgoingFrame } from './event-store.js';
import { createPublisher } from './publisher.js';

const frame = (stream: string, seq: number): OutgoingFrame => ({
  tenantId: 't',
  stream,
  seq,
  text: `${stream}#${seq}`,
});

function wire() {
  const log: string[] = [];
  return {
    log,
    hold: (frames: OutgoingFrame[]) => log.push(...frames.map((f) => `hold ${f.text}`)),
    push: (frames: OutgoingFrame[]) => log.push(...frames.map((f) => `push ${f.text}`)),
  };
}

test('frames of a relaxed commit are held until the fsync, pushed before the answers; a durable commit waits its turn', async () => {
  let finish: () => void = () => undefined;
  const sync = createSyncRounds(
    () =>
      new Promise<void>((resolve) => {
        finish = resolve;
      }),
  );
  const w = wire();
  const publisher = createPublisher(sync, w);
  publisher.publishAfterSync([frame('u', 1)], () => w.log.push('answered'));
  // Committed durably after the first, with the next number of the same stream: it must not overtake it.
  publisher.publish([frame('u', 2)]);
  await new Promise((r) => setImmediate(r));
  expect(w.log).toEqual(['hold u#1', 'hold u#2']);
  finish();
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setImmediate(r));
  finish();
  await new Promise((r) => setImmediate(r));
  expect(w.log).toEqual(['hold u#1', 'hold u#2', 'push u#1', 'answered', 'push u#2']);
});

test('with nothing waiting for an fsync, a durable commit goes out at once; after a failed fsync nothing is pushed', async () => {
  const w = wire();
  const publisher = createPublisher(
    createSyncRounds(() => Promise.reject(new Error('EIO'))),
    w,
  );
  publisher.publish([frame('v', 1)]);
  expect(w.log).toEqual(['push v#1']);
  const err = await new Promise<Error | undefined>((resolve) => publisher.publishAfterSync([frame('v', 2)], resolve));
  expect(err?.message).toBe('EIO');
  publisher.publish([frame('v', 3)]);
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setImmediate(r));
  // v#3 was committed durably after the failure: nothing goes out once an fsync has failed.
  expect(w.log).toEqual(['push v#1', 'hold v#2', 'hold v#3']);
});
