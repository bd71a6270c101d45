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
  // A second of PEAK_BYTES_PER_MS above the floor: far enough for a look to hold a second.
  const { state, disk, lines } = setup(100 + 64_000_000);
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

test('above warnFreeBytes a look is trusted for as long as 64 MB/s would take to reach the floor, a second at most', () => {
  const { state, disk } = setup(100 + 32_000_000);
  expect(disk.full()).toBe(false);
  state.free = 50;
  state.now = 499;
  expect(disk.full()).toBe(false); // 32 MB above the floor: half a second
  state.now = 500;
  expect(disk.full()).toBe(true);
  expect(state.looks).toBe(2);
});

test('the WAL file (reservedBytes) is kept above the floor: its checkpoint may need that much room', () => {
  const lines: string[] = [];
  const state = { free: 1000, wal: 0 };
  const disk = createDiskWatchdog({
    dir: '/data',
    minFreeBytes: 100,
    warnFreeBytes: 200,
    log: pino({ level: 'info' }, { write: (line: string) => lines.push(line) }),
    now: () => 0,
    freeBytes: () => state.free,
    reservedBytes: () => state.wal,
  });
  expect(disk.full()).toBe(false);
  state.wal = 850;
  disk.noteFull(); // a look now (and writes refused for the interval whatever it finds)
  expect([disk.level(), disk.freeBytes()]).toEqual(['full', 1000]);
  expect(JSON.parse(lines.at(-1)!)).toMatchObject({
    freeBytes: 1000,
    walBytes: 850,
    msg: expect.stringMatching(/full/),
  });
});
