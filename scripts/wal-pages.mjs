// Which b-trees the last transactions in a WAL wrote (docs/performance.md "What a `new` writes"): each frame's page
// number, mapped to its table or index with SQLite's dbstat. Usage, on a copy of a box's data directory taken
// while the WAL holds them (after kill -9, before the next start):
//   node scripts/wal-pages.mjs DATA_DIR/venue-box.db [TRANSACTIONS=4]
import Database from 'better-sqlite3';
import { readFileSync } from 'node:fs';
const [dbFile] = process.argv.slice(2);
const wal = readFileSync(`${dbFile}-wal`);
const pageSize = wal.readUInt32BE(8);
const txns = [];
let cur = [];
// Frames left from before the WAL last restarted carry the old salt: the valid ones end at the first of those.
const salt = wal.subarray(16, 24);
for (let off = 32; off + 24 + pageSize <= wal.length; off += 24 + pageSize) {
  if (!wal.subarray(off + 8, off + 16).equals(salt)) break;
  const pgno = wal.readUInt32BE(off);
  const commit = wal.readUInt32BE(off + 4);
  cur.push(pgno);
  if (commit) {
    txns.push(cur);
    cur = [];
  }
}
const db = new Database(dbFile, { readonly: true });
const names = new Map(
  db
    .prepare('SELECT name, pageno, pagetype FROM dbstat')
    .all()
    .map((r) => [r.pageno, `${r.name}:${r.pagetype}`]),
);
for (const t of txns.slice(-Number(process.argv[3] ?? 4))) {
  const counts = {};
  for (const p of t) {
    const n = p === 1 ? 'page1' : (names.get(p) ?? `?${p}`);
    counts[n] = (counts[n] ?? 0) + 1;
  }
  console.log(
    t.length,
    'frames:',
    Object.entries(counts)
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k}${v > 1 ? `x${v}` : ''}`)
      .join(' '),
  );
}
