import pino from 'pino';
import { expect, test } from 'vitest';
import { createDiskWatchdog } from './disk-watchdog.js';

function setup(free: number) {
  const state = { free, now: 0, looks: 0 };
  const lines: string[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line).msg as string) });
  const disk = createDiskWatchdog({
    dir: '/data',
    minFreeBytes: 100,
    warnFreeBytes: 200,
    log,
    now: () => state.now,
    freeBytes: () => {
      state.looks++;
      return state.free;
    },
  });
  return { state, disk, lines };
}

test('refuses below the floor, looks at most once a second, and recovers when space returns', () => {
  const { state, disk, lines } = setup(1000);
  expect(disk.full()).toBe(false);
  state.free = 50;
  state.now = 500;
  expect(disk.full()).toBe(false); // the look of t=0 still holds
  expect(state.looks).toBe(1);
  state.now = 1000;
  expect(disk.full()).toBe(true);
  expect(lines).toContain('data disk is full: write requests are refused with 503 until space is freed');
  state.free = 150;
  state.now = 2000;
  expect(disk.full()).toBe(false);
  expect(lines).toContain('data disk is nearly full (below storage.warnFreeBytes)');
  state.free = 1000;
  state.now = 3000;
  expect(disk.full()).toBe(false);
  expect(lines.at(-1)).toBe('data disk has space again');
});

test('after SQLITE_FULL writes are refused for one interval whatever statfs says, then measured again', () => {
  const { state, disk } = setup(1000);
  expect(disk.full()).toBe(false);
  disk.noteFull();
  state.now = 999;
  expect(disk.full()).toBe(true);
  state.now = 1000;
  expect(disk.full()).toBe(false);
});

test('level() tells ok, low and full apart, as of the last look (the metrics and /readyz read it)', () => {
  const { state, disk } = setup(1000);
  disk.full();
  expect(disk.level()).toBe('ok');
  state.free = 150;
  state.now = 1000;
  disk.full();
  expect([disk.level(), disk.freeBytes()]).toEqual(['low', 150]);
  state.free = 50;
  state.now = 2000;
  expect(disk.level()).toBe('low'); // no new look yet
  disk.full();
  expect(disk.level()).toBe('full');
});

test('below warnFreeBytes every write looks at the disk again (once a ms at most): a burst cannot pass the floor unseen', () => {
  const { state, disk } = setup(150);
  expect(disk.full()).toBe(false);
  state.free = 90;
  state.now = 1;
  expect(disk.full()).toBe(true);
  expect(state.looks).toBe(2);
  state.free = 150;
  state.now = 2;
  // At the floor the look is trusted for a second again, as before: space comes back by a person's hand.
  expect(disk.full()).toBe(true);
  expect(state.looks).toBe(2);
});

test('above warnFreeBytes a disk going down fast is looked at before the floor could be reached', () => {
  const { state, disk } = setup(10_000);
  expect(disk.full()).toBe(false);
  // 5,000 bytes lost in a second: 5 a ms, with 4,900 left above the floor: trusted for half of 980 ms.
  state.now = 1000;
  state.free = 5000;
  expect(disk.full()).toBe(false);
  state.now = 1400;
  state.free = 50;
  expect(disk.full()).toBe(false); // 400 ms: still trusted
  expect(state.looks).toBe(2);
  state.now = 1490;
  expect(disk.full()).toBe(true);
  expect(state.looks).toBe(3);
});
