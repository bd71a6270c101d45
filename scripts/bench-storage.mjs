// Storage growth per order command, and what retention gives back (docs/operations.md "Storage").
// Drives ORDERS orders with their whole lifecycle (lib/venue-day.mjs: new, append, update, remove, submit,
// ready, rounds, complete or cancel) through a real box (dist/main.cjs) three times, stopping the box between
// rounds (its stop checkpoints and truncates the WAL, so the file alone holds everything):
//   1. warm-up, 2. measure growth without pruning,
//   then prune with a cutoff past everything (the box's own prune functions: order commands and socket events),
//   3. the same load again: the freed pages are reused without a VACUUM, so the file grows only by what is kept.
// Prints bytes per command per phase, the largest tables' share, the file size and PRAGMA freelist_count.
import Database from 'better-sqlite3';
import { build } from 'esbuild';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startBox } from './lib/box.mjs';
import { driveVenueDay } from './lib/venue-day.mjs';

const ORDERS = Number(process.env.ORDERS ?? 300);
const root = new URL('..', import.meta.url).pathname;
const dataDir = mkdtempSync(join(tmpdir(), 'vb-bench-storage-'));
const dbFile = join(dataDir, 'venue-box.db');

// The box's own prune code, bundled from src/ (better-sqlite3 is the caller's, as in the box).
const bundle = await build({
  stdin: {
    contents:
      "export { createOrderRepo } from './src/modules/ordering/repo.ts'; export { createEventStore } from './src/modules/events/event-store.ts';",
    resolveDir: root,
    loader: 'ts',
  },
  bundle: true,
  platform: 'node',
  format: 'esm',
  write: false,
  logLevel: 'warning',
});
const modFile = join(dataDir, '..', `${dataDir.split('/').pop()}-prune.mjs`);
writeFileSync(modFile, bundle.outputFiles[0].text);
const { createOrderRepo, createEventStore } = await import(pathToFileURL(modFile).href);

async function runPhase() {
  const { proc, base } = await startBox(dataDir);
  const { commands } = await driveVenueDay(base, { orders: ORDERS, documents: 0, warehouses: [] });
  // Let the last commands be processed, then stop: the box checkpoints the WAL into the file and truncates it.
  await new Promise((r) => setTimeout(r, 500));
  const exited = new Promise((r) => proc.once('exit', r));
  proc.kill('SIGTERM');
  await exited;
  return commands;
}

function measure() {
  const db = new Database(dbFile, { readonly: true });
  const pageSize = db.pragma('page_size', { simple: true });
  const tables = db.prepare('SELECT name, SUM(pgsize) AS bytes FROM dbstat GROUP BY name').all();
  const out = {
    fileBytes: statSync(dbFile).size,
    pages: db.pragma('page_count', { simple: true }),
    freelist: db.pragma('freelist_count', { simple: true }),
    pageSize,
    commands: db.prepare('SELECT COUNT(*) FROM order_commands').pluck().get(),
    events: db.prepare('SELECT COUNT(*) FROM user_events').pluck().get(),
    tables: Object.fromEntries(tables.map((t) => [t.name, t.bytes])),
  };
  db.close();
  return out;
}

function prune() {
  const db = new Database(dbFile);
  const cutoff = Date.now() + 1;
  const orders = createOrderRepo(db);
  let commands = 0;
  for (let n = -1; n !== 0; commands += n) n = Math.max(0, orders.pruneProcessedCommands(cutoff, 1000));
  const events = createEventStore(db).pruneBefore(cutoff, Date.now());
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return { commands, events };
}

const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;
const line = (label, m) =>
  console.log(
    `${label.padEnd(26)} file ${kib(m.fileBytes).padStart(11)}  pages ${String(m.pages).padStart(6)}  freelist ${String(m.freelist).padStart(6)}  commands ${m.commands}  events ${m.events}`,
  );
function perCommand(label, a, b, commands) {
  const grown = Object.entries(b.tables)
    .map(([name, bytes]) => [name, (bytes - (a.tables[name] ?? 0)) / commands])
    .filter(([, per]) => Math.abs(per) >= 50)
    .sort((x, y) => y[1] - x[1]);
  console.log(
    `${label}: ${commands} commands, file +${((b.fileBytes - a.fileBytes) / commands).toFixed(0)} B/command; ` +
      `table bytes per command: ${grown.map(([n, per]) => `${n} ${per.toFixed(0)}`).join(', ')}`,
  );
}

try {
  console.log(`bench-storage: ${ORDERS} orders a phase, data in ${dataDir}`);
  await runPhase();
  const warm = measure();
  line('after warm-up', warm);
  const c2 = await runPhase();
  const grown = measure();
  line('after phase 2 (no prune)', grown);
  perCommand('phase 2, without pruning', warm, grown, c2);
  const removed = prune();
  const pruned = measure();
  line('after prune', pruned);
  console.log(
    `pruned ${removed.commands} commands, ${removed.events} events; file unchanged, ` +
      `${pruned.freelist - grown.freelist} pages (${kib((pruned.freelist - grown.freelist) * pruned.pageSize)}) now on the freelist`,
  );
  const c3 = await runPhase();
  const reused = measure();
  line('after phase 3 (reuse)', reused);
  perCommand('phase 3, after pruning', pruned, reused, c3);
  const prunable = (name) => /order_commands|user_events/.test(name);
  const share = (test) =>
    Object.entries(reused.tables)
      .filter(([n]) => test(n))
      .reduce((sum, [n, bytes]) => sum + bytes - (pruned.tables[n] ?? 0), 0) / c3;
  console.log(
    `phase 3 took ${pruned.freelist - reused.freelist} of the ${pruned.freelist} free pages; the file grew ` +
      `${((reused.fileBytes - pruned.fileBytes) / c3).toFixed(0)} B/command`,
  );
  console.log(
    `per command: ${share(prunable).toFixed(0)} B in commands and events (freed again by retention), ` +
      `${share((n) => !prunable(n) && /sync_outbox/.test(n)).toFixed(0)} B in the sync outbox (its own retention, after the central acknowledges), ` +
      `${share((n) => !prunable(n) && !/sync_outbox/.test(n)).toFixed(0)} B kept (orders, lines, print jobs, ...)`,
  );
} finally {
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(modFile, { force: true });
}
