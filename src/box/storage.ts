import { accessSync, constants, existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Config } from '../config.js';
import { CHECKPOINT_WAL_BYTES } from '../db/checkpoint.js';
import { createCheckpointer } from '../db/checkpointer.js';
import { measureWalRoom, walFileBytesOf } from '../db/wal-room.js';
import { DataDirClaimedError, claimDataDir } from '../db/data-dir-claim.js';
import { ProcessError } from '../shared/errors.js';
import { DB_FILE, type Db, openDatabase, PAGE_SIZE } from '../db/open.js';
import { MIGRATIONS, migrate } from '../db/migrate.js';
import { registerStandbyGauges } from '../modules/standby/metrics.js';
import { createPrimarySide } from '../modules/standby/primary-side.js';
import pkg from '../../package.json';
import { convertPageSize, pageSizeOf } from '../db/page-size.js';
import { createWalSync, durableWrites } from '../db/wal-sync.js';
import type { Logger } from '../log.js';
import { type BoxMetrics, registerDiskGauges } from '../modules/health/metrics.js';
import { createDiskWatchdog } from '../modules/storage/disk-watchdog.js';
import { nowMs } from '../shared/clock.js';
import type { Service } from '../shared/runtime.js';

/** The data directory cannot be made, written or claimed: exit 73 (docs/operations.md "Exit codes"). */
export class StartError extends ProcessError {
  constructor(message: string) {
    super('cantCreate', message);
  }
}

/**
 * The data directory, held by its claim, and the migrated database in it (docs/operations.md "Backups and restore":
 * one box per data dir). Throws StartError when the directory cannot be used; nothing is left open then.
 */
export function openStorage(config: Config, log: Logger, metrics: BoxMetrics | undefined) {
  const dataDir = resolve(config.dataDir);
  prepareDataDir(dataDir);
  // Held while the box runs: `venue-box restore` refuses it.
  const claim = claimDataDirForStart(dataDir);
  let db: Db | undefined;
  try {
    const file = join(dataDir, DB_FILE);
    db = openDatabase(file);
    migrate(db);
    // An older box's file, after its migrations (whose freed pages the rewrite leaves out): docs/operations.md
    // "What a `new` writes".
    if ((pageSizeOf(file) ?? PAGE_SIZE) !== PAGE_SIZE) {
      db.close();
      convertPageSize(file, log);
      db = openDatabase(file);
    }
  } catch (err) {
    db?.close();
    claim.release();
    throw err;
  }
  const opened = db;
  // Commands and tokens commit without their own fsync; one fsync of the WAL off the event loop makes what
  // committed meanwhile durable before any answer or frame goes out (docs/architecture.md "Durability and speed").
  const rawWalSync = createWalSync(join(dataDir, `${DB_FILE}-wal`), {
    // docs/architecture.md "Durability and speed": nothing may be confirmed after a failed fsync.
    failed(err) {
      log.fatal({ err }, 'the WAL could not be synced to the disk: stopping, so that nothing unsynced is confirmed');
      process.exit(70);
    },
    callbackThrew: (err) => log.error({ err }, 'answering after an fsync failed'),
    synced: metrics?.onWalSync,
  });
  // With a standby in step, every confirmation also waits for it to hold the change (docs/operations.md "A
  // standby box"): the same barrier before a token is answered, a ticket printed or an event sent to the central.
  const standby = createPrimarySide({
    db: opened,
    dataDir,
    log,
    options: config.standby,
    release: { version: pkg.version, schema: MIGRATIONS.at(-1)!.version },
    now: nowMs,
  });
  const walSync = standby.wrap(rawWalSync);
  const durable = durableWrites(opened, walSync);
  const { minFreeBytes, warnFreeBytes } = config.storage;
  const walFile = join(dataDir, `${DB_FILE}-wal`);
  const disk = createDiskWatchdog({
    dir: dataDir,
    minFreeBytes,
    warnFreeBytes,
    log,
    now: nowMs,
    // What the WAL's checkpoint may need: kept free above the floor (docs/operations.md "The WAL on a small disk").
    reservedBytes: () => walFileBytesOf(walFile),
  });
  if (metrics) {
    registerDiskGauges(metrics, () => {
      disk.full();
      return { freeBytes: disk.freeBytes(), level: disk.level(), minFreeBytes, warnFreeBytes };
    });
    registerStandbyGauges(metrics, () => standby.status());
  }

  let closed = false;
  let stopped: (() => void) | undefined;
  /** First to start, last to stop: the WAL's last fsync, a checkpoint that empties the WAL, the claim released. */
  const service: Service = {
    run: () => new Promise<void>((r) => (stopped = r)),
    async stop() {
      try {
        await close();
      } finally {
        stopped?.();
      }
    },
  };
  async function close(): Promise<void> {
    if (closed) return;
    closed = true;
    try {
      standby.close();
      await rawWalSync.close();
      opened.pragma('wal_checkpoint(TRUNCATE)');
      opened.close();
    } finally {
      claim.release();
    }
  }
  return {
    dataDir,
    db: opened,
    walSync,
    durable,
    standby,
    disk,
    minFreeBytes,
    service,
    /** For a start that failed before the runtime took the storage over. */
    close,
  };
}
export type Storage = ReturnType<typeof openStorage>;

/**
 * PASSIVE checkpoints on a worker thread (src/db/checkpointer.ts); `writes` is the command queue, which it holds
 * for the quiet moment that restarts the WAL.
 */
export function createBoxCheckpointer(
  storage: Storage,
  log: Logger,
  metrics: BoxMetrics | undefined,
  writes: { hold(): void; release(): void },
): Service {
  const dbFile = join(storage.dataDir, DB_FILE);
  const checkpointer = createCheckpointer(storage.db, dbFile, {
    intervalMs: 250,
    walBytes: CHECKPOINT_WAL_BYTES,
    // On a small or filling disk the WAL is checkpointed and trimmed before it could take the room a checkpoint
    // needs at the floor (docs/operations.md "The WAL on a small disk").
    walRoom: () => measureWalRoom(storage.dataDir, `${dbFile}-wal`, storage.minFreeBytes),
    onError: (err) => log.error({ err }, 'WAL checkpoint failed'),
    onCheckpoint: metrics?.onCheckpoint,
    onRestartError: (err) => log.warn({ err }, 'the checkpointer could not restart the WAL; the next commit does'),
    onWorker: (running) =>
      log.debug(running ? "the checkpointer's thread started" : "the checkpointer's thread is gone"),
    writes,
    // Order confirmations wait while the worker restarts the WAL: a card slow to sync shows here first.
    onSlowHold: (heldMs) =>
      log.warn(
        { heldMs: Math.round(heldMs) },
        'order confirmations are waiting for the WAL restart: the storage is slow to sync',
      ),
    onHeld: (seconds, slow) => {
      metrics?.onQueueHeld(seconds);
      if (slow) log.warn({ heldMs: Math.round(seconds * 1000) }, 'order confirmations waited for the WAL restart');
    },
    // With a standby, the WAL restarts there, once the standby holds every frame (src/modules/standby/primary.ts).
    onCaughtUp: () => storage.standby.caughtUp(),
  });
  storage.standby.useCheckpointer(checkpointer);
  return checkpointer;
}

function claimDataDirForStart(dataDir: string): { release(): void } {
  try {
    return claimDataDir(dataDir);
  } catch (err) {
    if (err instanceof DataDirClaimedError) throw err;
    throw new StartError(
      `data directory ${dataDir}: cannot take its lock: ${(err as { code?: string }).code ?? String(err)}`,
    );
  }
}

/**
 * Creates the data directory one level at a time: Node 20's recursive mkdirSync spins forever on paths such
 * as /proc/x instead of failing, and a box that hangs at start is worse than one that says why it stopped.
 */
export function prepareDataDir(dir: string): void {
  const missing: string[] = [];
  for (let d = dir; !existsSync(d) && dirname(d) !== d; d = dirname(d)) missing.unshift(d);
  try {
    for (const d of missing) mkdirSync(d, { mode: 0o750 });
    if (!statSync(dir).isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
    accessSync(dir, constants.W_OK);
  } catch (err) {
    throw new StartError(
      `data directory ${dir} is not writable: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
    );
  }
}
