// What SQLite's page cache size costs a commit (docs/performance.md "The page cache"). Builds a database larger
// than the largest cache tried (ROWS rows keyed by random UUIDs, about 100 MB), then for each cache size, in turn
// and ROUNDS times over, opens it as the box does (WAL, cache_size), fills the cache by reading the table, and
// commits TRANSACTIONS transactions of INSERTS random-key inserts each (page splits, as an index keyed by UUIDs
// has at every few inserts). Each round starts with the next size, so that no size always runs on the larger file
// (every run adds its rows). One JSON line per run, CPU µs per transaction (user + system of this process); last,
// each size's median. The RSS of one process that ran several sizes says little of any one: `npm run bench`
// gives the box's. Pin it to one core (`taskset -c 0 npm run bench:page-cache`) and compare the sizes of one run
// with each other.
import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROWS = Number(process.env.ROWS ?? 300_000);
const TRANSACTIONS = Number(process.env.TRANSACTIONS ?? 6000);
const INSERTS = Number(process.env.INSERTS ?? 5);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const SIZES_KIB = (process.env.SIZES_KIB ?? '32768,8192,4096').split(',').map(Number);

const dir = mkdtempSync(join(tmpdir(), 'vb-bench-page-cache-'));
const file = join(dir, 'cache.db');
try {
  const setup = new Database(file);
  setup.pragma('journal_mode = WAL');
  setup.exec('CREATE TABLE t (id TEXT PRIMARY KEY, v TEXT NOT NULL) STRICT');
  const fill = setup.prepare('INSERT INTO t VALUES (?, ?)');
  setup.transaction(() => {
    for (let i = 0; i < ROWS; i++) fill.run(randomUUID(), 'x'.repeat(200));
  })();
  setup.pragma('wal_checkpoint(TRUNCATE)');
  setup.close();

  const runs = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const kib of [...SIZES_KIB.slice(round % SIZES_KIB.length), ...SIZES_KIB.slice(0, round % SIZES_KIB.length)]) {
      const db = new Database(file);
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = OFF'); // the fsync is not what is measured
      db.pragma('wal_autocheckpoint = 0');
      db.pragma(`cache_size = -${kib}`);
      for (const _ of db.prepare('SELECT id, v FROM t').iterate()) {
        /* fill the cache */
      }
      const insert = db.prepare('INSERT INTO t VALUES (?, ?)');
      const tx = db.transaction(() => {
        for (let k = 0; k < INSERTS; k++) insert.run(randomUUID(), 'y'.repeat(200));
      });
      const before = process.cpuUsage();
      for (let i = 0; i < TRANSACTIONS; i++) tx();
      const used = process.cpuUsage(before);
      const run = {
        cacheKib: kib,
        round,
        inserts: INSERTS,
        cpuUsPerTransaction: Math.round((used.user + used.system) / TRANSACTIONS),
      };
      runs.push(run);
      console.log(JSON.stringify(run));
      db.pragma('wal_checkpoint(TRUNCATE)');
      db.close();
    }
  }
  const median = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(
    JSON.stringify({
      medians: SIZES_KIB.map((kib) => {
        const of = runs.filter((r) => r.cacheKib === kib);
        return { cacheKib: kib, cpuUsPerTransaction: median(of.map((r) => r.cpuUsPerTransaction)) };
      }),
    }),
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
