import { execFileSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statfsSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, test } from 'vitest';
import { DEMO, jsonLogs, startTestBox, type TestBox } from './support/box.js';
import { expectOneLineFailure, runCli } from './support/cli.js';
import { command, newOrder } from './support/orders.js';
import { call, staff, W1, wpath } from './warehouse-client.js';

// Backups and restore (docs/operations.md "Backups and restore"): the scheduled job, retention, atomicity, `backup list`,
// `restore` refusing a running box's data dir and files that are not backups. The drill is test/backup-drill.test.ts.
const boxes: TestBox[] = [];
afterEach(async () => {
  for (const box of boxes.splice(0)) await box.stop();
});

const cli = (...args: string[]) => runCli(args);
const tmp = (): string => mkdtempSync(join(tmpdir(), 'vb-backup-'));
const backupsIn = (dir: string) =>
  readdirSync(dir)
    .filter((n) => /^venue-box-.*\.backup$/.test(n))
    .sort();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function start(config: Record<string, unknown> = {}, dataDir?: string): Promise<TestBox> {
  const box = await startTestBox({ config, ...(dataDir ? { dataDir } : {}) });
  boxes.push(box);
  return box;
}

/** The box's log entries with this message. */
const logged = (box: TestBox, msg: string) => jsonLogs(box).filter((e) => e.msg === msg);
async function waitForLog(box: TestBox, msg: string, count = 1, ms = 20_000): Promise<Record<string, unknown>[]> {
  for (let waited = 0; logged(box, msg).length < count && waited < ms; waited += 50) await sleep(50);
  expect(logged(box, msg).length, `${msg} in ${box.logs.join('\n')}`).toBeGreaterThanOrEqual(count);
  return logged(box, msg);
}

/** Makes the database a few MiB: PZ documents of 1000 items each. */
async function grow(box: TestBox, documents: number): Promise<void> {
  const kelner = await staff(box);
  for (let d = 0; d < documents; d++) {
    const items = Array.from({ length: 1000 }, (_, i) => ({ id: `item-${d}-${i}`, unit: 'kg', qty: 1 + i }));
    expect((await call(box, kelner, 'POST', wpath(W1, '/documents/pz'), { items })).status).toBe(201);
  }
}

function configFile(config: Record<string, unknown>): string {
  const file = join(tmp(), 'venue-box.json');
  writeFileSync(file, JSON.stringify(config));
  return file;
}

describe('the scheduled backup', () => {
  test('runs on its schedule while the box serves; within one hour only the newest stays', async () => {
    const stick = tmp();
    const box = await start({ backup: { dir: stick, schedule: '*/2 * * * * *' } });
    const t = await box.token();
    await command(box, t.access_token, 'new', newOrder(DEMO.openVenue));
    const [firstRun, secondRun] = await waitForLog(box, 'backup written', 2);
    expect(firstRun).toMatchObject({
      file: expect.stringMatching(new RegExp(`^${stick}/venue-box-\\d{8}T\\d{6}\\.\\d{3}Z\\.backup$`)),
    });
    // Both in the same hour: the second removes the first (48 hourly: the newest of each hour).
    expect(secondRun!.removed).toEqual([(firstRun!.file as string).split('/').at(-1)]);
    expect(backupsIn(stick)).toEqual([(secondRun!.file as string).split('/').at(-1)]);
    // The box's event loop only waited for a child process; the figure is logged with each backup.
    expect(secondRun!.loopDelayMaxMs).toEqual(expect.any(Number));
    expect(secondRun!.loopDelayMaxMs as number).toBeLessThan(250);
    expect(statSync(secondRun!.file as string).mode & 0o777).toBe(0o600);
    expect(cli('backup', 'verify', secondRun!.file as string).status).toBe(0);
    // Nothing half-written is left beside it, and the box served meanwhile.
    expect(readdirSync(stick).filter((n) => n.startsWith('.'))).toEqual([]);
    expect((await box.get('/venue-api/api/nearest?lat=50&lng=20', t.access_token)).status).toBe(200);
  });

  test('enabled: false takes none; the default directory is "backups" in the data dir', async () => {
    const off = await start({ backup: { enabled: false, schedule: '* * * * * *' } });
    const on = await start({ backup: { schedule: '* * * * * *' } });
    await waitForLog(on, 'backup written');
    expect(backupsIn(join(on.dataDir, 'backups'))).toHaveLength(1);
    expect(statSync(join(on.dataDir, 'backups')).mode & 0o777).toBe(0o700);
    expect(existsSync(join(off.dataDir, 'backups'))).toBe(false);
    expect(logged(off, 'backup written')).toEqual([]);
  });

  test('a stick that is not there: logged as an error, nothing created, the box serves on; back, it works', async () => {
    const stick = join(tmp(), 'not-mounted');
    const box = await start({ backup: { dir: stick, schedule: '* * * * * *' } });
    const [failed] = await waitForLog(box, 'backup failed');
    expect(failed).toMatchObject({ level: 'error', error: expect.stringContaining(`${stick} does not exist`) });
    expect(existsSync(stick)).toBe(false);
    const t = await box.token();
    await command(box, t.access_token, 'new', newOrder(DEMO.openVenue));
    mkdirSync(stick);
    await waitForLog(box, 'backup written');
    expect(backupsIn(stick)).toHaveLength(1);
  });

  test('a bad schedule stops the box at start with the option named', () => {
    const r = cli('serve', '--data-dir', tmp(), '--config', configFile({ backup: { schedule: 'every hour' } }));
    expectOneLineFailure(r, /backup\/schedule.*every hour/, 78);
  });
});

describe('backup now, list and retention', () => {
  test('retention keeps exactly the newest of the last hours and days; list says which rule keeps each', async () => {
    const box = await start();
    const stick = tmp();
    const config = configFile({ backup: { dir: stick, keepHourly: 2, keepDaily: 3 } });
    const first = cli('backup', 'now', '--data-dir', box.dataDir, '--config', config);
    expect(first.status, first.stderr).toBe(0);
    const real = first.stdout.trim().split('\n').at(-1)!;
    // Older backups (copies of the real one under older names), a file that is not a backup, a temp file of a
    // writer that died (pid 2^22+1 is above Linux's pid_max) and one of a live writer (this test).
    const older = [
      '20260101T100000.000Z',
      '20260101T220000.000Z',
      '20260102T080000.000Z',
      '20260102T083000.000Z',
      '20260103T050000.000Z',
    ].map((t) => `venue-box-${t}.backup`);
    for (const name of older) copyFileSync(real, join(stick, name));
    rmSync(real);
    const dead = '.venue-box-20260103T060000.000Z.backup.4194305.tmp';
    const live = `.venue-box-20260103T060000.000Z.backup.${process.pid}.tmp`;
    for (const name of ['notes.txt', dead, `${dead}-journal`, live]) writeFileSync(join(stick, name), 'x');

    const list = cli('backup', 'list', '--data-dir', box.dataDir, '--config', config);
    expect(list.status, list.stderr).toBe(0);
    const lines = list.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(`backups in ${stick} (kept: the newest, 2 hourly, 3 daily; UTC)`);
    expect(lines.slice(1, -1).map((l) => l.split(/\s{2,}/))).toEqual([
      [older[4], '2026-01-03 05:00:00', expect.stringMatching(/^\d+\.\d MiB$/), 'newest, hourly, daily'],
      [older[3], '2026-01-02 08:30:00', expect.any(String), 'hourly, daily'],
      [older[2], '2026-01-02 08:00:00', expect.any(String), 'removed at the next backup'],
      [older[1], '2026-01-01 22:00:00', expect.any(String), 'daily'],
      [older[0], '2026-01-01 10:00:00', expect.any(String), 'removed at the next backup'],
    ]);
    expect(lines.at(-1)).toMatch(/^5 backup\(s\), \d+\.\d MiB$/);

    const now = cli('backup', 'now', '--data-dir', box.dataDir, '--config', config);
    expect(now.status, now.stderr).toBe(0);
    const out = now.stdout.trimEnd().split('\n');
    const newest = out.at(-1)!.split('/').at(-1)!;
    expect(out.filter((l) => l.startsWith('removed by retention: ')).sort()).toEqual(
      [older[0], older[1], older[2]].map((n) => `removed by retention: ${n}`),
    );
    // Kept: the new one (this hour, today), 01-03 05:00 (the newest of its hour and day), 01-02 08:30 (its day).
    expect(readdirSync(stick).sort()).toEqual([live, newest, older[3], older[4], 'notes.txt'].sort());
  });

  test('backup now works on a stopped box too, and list of an empty directory says so', async () => {
    const box = await start();
    await box.stop();
    const stick = tmp();
    const config = configFile({ backup: { dir: stick } });
    expect(cli('backup', 'list', '--data-dir', box.dataDir, '--config', config).stdout).toBe(
      `no backups in ${stick}\n`,
    );
    const r = cli('backup', 'now', '--data-dir', box.dataDir, '--config', config);
    expect(r.status, r.stderr).toBe(0);
    expect(backupsIn(stick)).toHaveLength(1);
    expectOneLineFailure(cli('backup', 'now', '--data-dir', tmp()), /no database at/, 66);
    expectOneLineFailure(
      cli('backup', 'list', '--data-dir', tmp(), '--config', configFile({ backup: { dir: join(stick, 'x') } })),
      /cannot list backup directory .*ENOENT/,
      74,
    );
    expectOneLineFailure(cli('backup', 'later'), /unknown command: backup later/, 64);
  });
});

describe('restore refuses', () => {
  let backupFile: string;
  const source = async (): Promise<string> => {
    if (backupFile) return backupFile;
    const box = await start();
    const r = cli('backup', 'now', '--data-dir', box.dataDir);
    expect(r.status, r.stderr).toBe(0);
    backupFile = r.stdout.trim().split('\n').at(-1)!;
    return backupFile;
  };

  test('the data dir of a running box (it holds the lock): exit 75, nothing changed; a second box refuses it too', async () => {
    const file = await source();
    const box = await start();
    const before = statSync(join(box.dataDir, 'venue-box.db')).ino;
    const r = cli('restore', file, '--data-dir', box.dataDir);
    expectOneLineFailure(
      r,
      new RegExp(`refusing to restore: a venue-box is running on data directory ${box.dataDir}.*stop it first`),
      75,
    );
    expect(statSync(join(box.dataDir, 'venue-box.db')).ino).toBe(before);
    expect(readdirSync(box.dataDir).filter((n) => n.startsWith('replaced-') || n.includes('.restore.'))).toEqual([]);
    expect((await box.get('/venue-api/api/nearest?lat=50&lng=20', (await box.token()).access_token)).status).toBe(200);
    expectOneLineFailure(
      cli('serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', box.dataDir),
      /a venue-box is running on data directory/,
      75,
    );
    // Once it stopped (even killed), the lock is gone with it.
    await box.stop('SIGKILL');
    expect(cli('restore', file, '--data-dir', box.dataDir).status).toBe(0);
  });

  test.each([
    ['an empty file', () => writeFile(Buffer.alloc(0)), /not an SQLite database/],
    [
      'random bytes',
      () => writeFile(Buffer.from(Array.from({ length: 9000 }, (_, i) => (i * 7919) % 256))),
      /not an SQLite database/,
    ],
    ['a text file', () => writeFile(Buffer.from('SQLite format 2\n')), /not an SQLite database/],
    ['a directory', () => tmp(), /not a regular file/],
    [
      'a copy of venue-box.db',
      async () => {
        const box = await start();
        await box.stop();
        return join(box.dataDir, 'venue-box.db');
      },
      /no venue_box_backup table/,
    ],
    [
      'a truncated backup',
      async () => writeFile(readFileSync(await source()).subarray(0, 8192)),
      /damaged|malformed|SQLITE_CORRUPT/i,
    ],
    [
      'a backup with damaged pages',
      async () => {
        const data = Buffer.from(readFileSync(await source()));
        // Each damaged page's header (b-tree page type, cell count and pointers; a freelist page's links): bytes in a
        // page's unused middle would not count as damage, so the header is what integrity_check always reads.
        for (let page = 2; page * 4096 < data.length; page += 3) data.fill(0x5a, page * 4096, page * 4096 + 12);
        return writeFile(data);
      },
      /damaged|malformed|integrity_check/i,
    ],
    [
      'a backup that names a file outside the data dir',
      async () => {
        const file = writeFile(readFileSync(await source()));
        const db = new Database(file);
        db.prepare('UPDATE venue_box_backup SET files = ?').run(
          JSON.stringify({ '../../escape': Buffer.from('{"secretKey":"x"}').toString('base64') }),
        );
        db.close();
        return file;
      },
      /unknown file "\.\.\/\.\.\/escape"/,
    ],
    [
      'a backup of an unknown format',
      async () => {
        const file = writeFile(readFileSync(await source()));
        const db = new Database(file);
        db.prepare('UPDATE venue_box_backup SET format = 99').run();
        db.close();
        return file;
      },
      /format 99 is unknown/,
    ],
  ])('%s: exit 65 with one line, the data dir neither created nor touched', async (_name, make, pattern) => {
    const file = await make();
    const target = join(tmp(), 'data');
    expectOneLineFailure(
      cli('restore', file, '--data-dir', target),
      new RegExp(`is not a venue-box backup: .*${pattern.source}`, pattern.flags),
      65,
    );
    expect(existsSync(target)).toBe(false);
    expect(cli('backup', 'verify', file).status).toBe(65);
  });

  test('a missing file: exit 1; no --data-dir: a usage error', async () => {
    expectOneLineFailure(
      cli('restore', join(tmp(), 'nope.backup'), '--data-dir', tmp()),
      /cannot read .*nope\.backup: ENOENT/,
      66,
    );
    expectOneLineFailure(cli('restore', await source()), /restore needs --data-dir/, 64);
  });
});

describe('restore into a data dir that holds data', () => {
  test('what it held (database with its -wal, key, device file) is moved aside, not deleted', async () => {
    const box = await start();
    const r = cli('backup', 'now', '--data-dir', box.dataDir);
    const file = r.stdout.trim().split('\n').at(-1)!;
    const t = await box.token();
    const later = await command(box, t.access_token, 'new', newOrder(DEMO.openVenue));
    await box.stop('SIGKILL'); // leaves venue-box.db-wal with the later order
    const held = readdirSync(box.dataDir)
      .filter((n) => /^venue-box\.db|jwt/.test(n))
      .sort();
    expect(held).toContain('venue-box.db-wal');

    const restored = cli('restore', file, '--data-dir', box.dataDir);
    expect(restored.status, restored.stderr).toBe(0);
    const aside = readdirSync(box.dataDir).filter((n) => n.startsWith('replaced-'));
    expect(aside).toHaveLength(1);
    expect(restored.stdout).toContain(`moved to ${join(box.dataDir, aside[0]!)}`);
    expect(readdirSync(join(box.dataDir, aside[0]!)).sort()).toEqual(held);
    // The set-aside database still holds the later order; the restored box does not.
    const again = await start({}, box.dataDir);
    expect((await again.get(`/ordering-api/api/order/${later.orderId}`, t.access_token)).status).toBe(404);
    await again.stop();
    const old = await start({}, join(box.dataDir, aside[0]!));
    expect((await old.get(`/ordering-api/api/order/${later.orderId}`, t.access_token)).status).toBe(200);
  });
});

function writeFile(data: Buffer): string {
  const file = join(tmp(), 'suspect.backup');
  writeFileSync(file, data);
  return file;
}

// Failures on a real disk of its own: small tmpfs mounts, which only root may make (as test/full-disk.test.ts).
function mountTmpfs(options: string): string | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'vb-backup-disk-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', dir], { stdio: 'ignore' });
    return dir;
  } catch {
    rmSync(dir, { recursive: true, force: true });
    return undefined;
  }
}
const mounts: string[] = [];
const probe = mountTmpfs('size=1m');
if (probe) mounts.push(probe);
else
  console.warn(
    'test/backup.test.ts: the full and read-only disk tests are skipped: `mount -t tmpfs` failed (it needs root)',
  );
afterAll(() => {
  for (const dir of mounts) {
    execFileSync('umount', [dir]);
    rmSync(dir, { recursive: true, force: true });
  }
});

describe.skipIf(!probe)('a backup that fails on its disk leaves no partial file', () => {
  test('a full stick: SQLITE_FULL is logged, nothing is left, the box serves on; with space again it works', async () => {
    const stick = mountTmpfs('size=512k')!;
    mounts.push(stick);
    const box = await start({ backup: { dir: stick, schedule: '* * * * * *' } });
    await grow(box, 3);
    const bytes = ['venue-box.db', 'venue-box.db-wal'].reduce((n, f) => n + statSync(join(box.dataDir, f)).size, 0);
    expect(bytes).toBeGreaterThan(1024 * 1024);
    const failures = await waitForLog(box, 'backup failed', 2);
    expect(failures[1]).toMatchObject({ level: 'error', error: expect.stringMatching(/SQLITE_FULL|ENOSPC/) });
    expect(readdirSync(stick)).toEqual([]);
    const t = await box.token();
    await command(box, t.access_token, 'new', newOrder(DEMO.openVenue));
    // The same with the command: exit 74, one line, nothing left.
    expectOneLineFailure(
      cli('backup', 'now', '--data-dir', box.dataDir, '--config', configFile({ backup: { dir: stick } })),
      /SQLITE_FULL|ENOSPC/,
      74,
    );
    expect(readdirSync(stick)).toEqual([]);
    execFileSync('mount', ['-o', 'remount,size=64m', stick]);
    await waitForLog(box, 'backup written');
    expect(backupsIn(stick)).toHaveLength(1);
  });

  test('a read-only stick: an error, nothing left', async () => {
    const stick = mountTmpfs('size=1m,ro')!;
    mounts.push(stick);
    const box = await start();
    expectOneLineFailure(
      cli('backup', 'now', '--data-dir', box.dataDir, '--config', configFile({ backup: { dir: stick } })),
      /EROFS/,
      74,
    );
    expect(readdirSync(stick)).toEqual([]);
  });

  test('on the data disk itself, a backup never takes the space above storage.warnFreeBytes', async () => {
    const disk = mountTmpfs('size=16m')!;
    mounts.push(disk);
    const dataDir = join(disk, 'data');
    mkdirSync(dataDir);
    const box = await start({ storage: { minFreeBytes: 1024 * 1024 } }, dataDir);
    // Kept free: all but half the database's size of what is free now. The box serves (minFreeBytes is lower), a
    // copy of the database does not fit above it.
    const { bavail, bsize } = statfsSync(disk);
    const database = statSync(join(dataDir, 'venue-box.db')).size;
    const warnFreeBytes = bavail * bsize - Math.floor(database / 2);
    expect(warnFreeBytes).toBeGreaterThan(2 * 1024 * 1024);
    const r = cli(
      'backup',
      'now',
      '--data-dir',
      dataDir,
      '--config',
      configFile({ storage: { minFreeBytes: 1024 * 1024, warnFreeBytes } }),
    );
    expectOneLineFailure(r, /not enough space for a backup on the data disk: .*storage\.warnFreeBytes/, 74);
    expect(readdirSync(join(dataDir, 'backups'))).toEqual([]);
    expect((await box.get('/venue-api/api/nearest?lat=50&lng=20', (await box.token()).access_token)).status).toBe(200);
  });
});
