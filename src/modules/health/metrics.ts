import { monitorEventLoopDelay } from 'node:perf_hooks';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { CheckpointDone } from '../../db/open.js';
import type { ProcessedCommand, QueueObserver } from '../ordering/command-queue.js';
import type { PrinterStatus } from '../printing/schemas.js';
import type { DiskLevel } from '../storage/disk-watchdog.js';

/** What the box is: its version, and the order command kinds (each has a series at 0 from the start). */
export interface MetricsInfo {
  version: string;
  commandKinds: readonly string[];
}

/** The printers as the metrics read them (src/modules/printing/service.ts printerHealth). */
export type PrinterHealth = { name: string; status: PrinterStatus; queueDepth: number }[];
export interface SyncHealth {
  enrolled: boolean;
  backlog: number;
  oldestUnsyncedAgeS: number | null;
  lastSuccessMs: number | null;
  deadLetters: number;
}
export interface DiskHealth {
  freeBytes: number;
  level: DiskLevel;
  minFreeBytes: number;
  warnFreeBytes: number;
}

const LOOP_RESOLUTION_MS = 20;
/** prom-client's default gauges whose names say counter (docs/operations.md "Health: metrics, readiness and the watchdog"). */
export const TOTAL_NAMED_GAUGES = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
] as const;
const PRINTER_STATUSES: readonly PrinterStatus[] = ['ok', 'paperNearEnd', 'paperOut', 'offline', 'unknown'];
const OUTCOMES: readonly ProcessedCommand['outcome'][] = ['applied', 'rejected', 'failed'];
/** From a commit's fsync on a good card (~1 ms) to a stalled one (seconds). */
const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
/** The bench's command-to-ORDER_CHANGE figures are 8 ms p50, 40 ms p99; a restart's backlog takes seconds. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * The box's metrics in a registry of its own (two boxes in one process never mix), made before any other part.
 * Counters and histograms are fed after each commit of the command queue and each WAL checkpoint (no SQL per
 * command); gauges are read at scrape time by collect callbacks, registered by the layer that makes the part
 * holding the number (the register* functions below; docs/architecture.md "Wiring and lifecycle").
 */
export function createBoxMetrics(info: MetricsInfo) {
  const registry = new Registry();
  const registers = [registry];
  // Node's and the process's standard families (process_resident_memory_bytes, nodejs_eventloop_lag_*_seconds,
  // ...) keep their standard names, which every Node dashboard knows.
  collectDefaultMetrics({ register: registry });
  // Except three gauges prom-client names with a counter's `_total` suffix, which `promtool check metrics` (and
  // so a scraper's CI) refuses: each is the sum of its per-type family, which stays (`sum(nodejs_active_handles)`).
  for (const name of TOTAL_NAMED_GAUGES) registry.removeSingleMetric(name);

  new Gauge({
    name: 'venue_box_build_info',
    help: 'Always 1; the running version in its label.',
    labelNames: ['version'],
    registers,
  }).set({ version: info.version }, 1);

  const confirmed = new Counter({
    name: 'venue_box_commands_confirmed_total',
    help: 'Order commands confirmed (committed, 200 sent), by kind.',
    labelNames: ['kind'],
    registers,
  });
  const processed = new Counter({
    name: 'venue_box_commands_processed_total',
    help: 'Order commands processed, by kind and outcome (applied; rejected: a NOTIFICATION; failed: a bug).',
    labelNames: ['kind', 'outcome'],
    registers,
  });
  const latency = new Histogram({
    name: 'venue_box_command_push_latency_seconds',
    help: "From a command's confirmation to its frames pushed to the sockets.",
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const transaction = new Histogram({
    name: 'venue_box_queue_transaction_duration_seconds',
    help: 'Transactions of the command queue (confirm: each that stored commands; process: each that also applied some).',
    labelNames: ['phase'],
    buckets: DURATION_BUCKETS,
    registers,
  });
  const commit = new Histogram({
    name: 'venue_box_queue_commit_duration_seconds',
    help: "The COMMIT of the command queue's transactions alone: the WAL write (synchronous=NORMAL, the fsync follows; FULL for a backlog).",
    labelNames: ['phase'],
    buckets: DURATION_BUCKETS,
    registers,
  });
  const walSync = new Histogram({
    name: 'venue_box_wal_fsync_duration_seconds',
    help: 'Each fdatasync of the WAL that makes order commands and tokens durable before their answer (event-loop delay included).',
    buckets: DURATION_BUCKETS,
    registers,
  });
  const checkpoint = new Histogram({
    name: 'venue_box_wal_checkpoint_duration_seconds',
    help: 'PASSIVE WAL checkpoints (when 32 MiB wait, or the WAL is idle).',
    buckets: DURATION_BUCKETS,
    registers,
  });
  const checkpointFailures = new Counter({
    name: 'venue_box_wal_checkpoint_failures_total',
    help: 'WAL checkpoints that failed (a full disk, an I/O error).',
    registers,
  });
  const serviceRestarts = new Counter({
    name: 'venue_box_service_restarts_total',
    help: 'Parts of the box whose run failed and that were run again (the loops to the central): by service.',
    labelNames: ['service'],
    registers,
  });
  const queueHeld = new Histogram({
    name: 'venue_box_wal_restart_hold_seconds',
    help: 'Quiet moments the WAL checkpointer took from the command queue (confirmations wait): how long each held it.',
    buckets: DURATION_BUCKETS,
    registers,
  });
  const walFrames = new Gauge({
    name: 'venue_box_wal_frames',
    help: 'Frames (pages) in the WAL file at the last checkpoint.',
    registers,
  });

  // Node's monitor records the interval between its timer's firings, so an idle loop reads as the resolution
  // (prom-client's nodejs_eventloop_lag_*_seconds read ~10 ms idle); these subtract it. Reset at every scrape.
  const loop = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
  loop.enable();
  const delay = (ns: number) => Math.max(0, ns / 1e6 - LOOP_RESOLUTION_MS) / 1000;
  new Gauge({
    name: 'venue_box_event_loop_delay_p99_seconds',
    help: 'Event-loop delay since the last scrape, 99th percentile.',
    registers,
    collect() {
      this.set(delay(loop.percentile(99)));
    },
  });
  new Gauge({
    name: 'venue_box_event_loop_delay_max_seconds',
    help: 'Longest event-loop delay since the last scrape.',
    registers,
    collect() {
      this.set(delay(loop.max));
      // Collected after p99 (registration order), in the same tick: both saw the same samples.
      loop.reset();
    },
  });

  for (const kind of info.commandKinds) {
    confirmed.inc({ kind }, 0);
    for (const outcome of OUTCOMES) processed.inc({ kind, outcome }, 0);
  }

  // Per command: a counter increment and a histogram observation, 1-2 us here (a command costs ~1 ms); the rest
  // is per batch.
  const observer: QueueObserver = {
    confirmed(kinds, transactionSeconds, commitSeconds) {
      for (const kind of kinds) confirmed.inc({ kind });
      transaction.observe({ phase: 'confirm' }, transactionSeconds);
      commit.observe({ phase: 'confirm' }, commitSeconds);
    },
    processed(commands, transactionSeconds, commitSeconds, pushedMs) {
      for (const c of commands) {
        processed.inc({ kind: c.kind, outcome: c.outcome });
        latency.observe(Math.max(0, pushedMs - c.confirmedMs) / 1000);
      }
      transaction.observe({ phase: 'process' }, transactionSeconds);
      commit.observe({ phase: 'process' }, commitSeconds);
    },
  };

  return {
    registry,
    /** For the command queue (QueueDeps.observer). */
    observer,
    /** For the WAL's fsync rounds (src/db/wal-sync.ts SyncHooks.synced). */
    onWalSync(seconds: number): void {
      walSync.observe(seconds);
    },
    /** For startCheckpointer. */
    onCheckpoint(done: CheckpointDone): void {
      checkpoint.observe(done.seconds);
      if (!done.ok) checkpointFailures.inc();
      // -1: another process's checkpoint held the lock, nothing was learnt of the WAL (not a failure).
      else if (done.walFrames >= 0) walFrames.set(done.walFrames);
    },
    /** For the runtime's 'restart' policy (src/shared/runtime.ts RuntimeOptions.onRestart). */
    onServiceRestart(service: string): void {
      serviceRestarts.inc({ service });
    },
    /** For the checkpointer's quiet moments (CheckpointerOptions.onHeld). */
    onQueueHeld(seconds: number): void {
      queueHeld.observe(seconds);
    },
    /** The text exposition format (Prometheus 0.0.4). */
    contentType: registry.contentType as string,
    render: (): Promise<string> => registry.metrics(),
    /** Stops the event-loop monitor (a box stopped inside a process that goes on: tests). */
    close(): void {
      loop.disable();
    },
  };
}
export type BoxMetrics = ReturnType<typeof createBoxMetrics>;

/** A gauge read at scrape time (for the register* functions here and in other modules). */
export function gauge(m: BoxMetrics, name: string, help: string, read: () => number): void {
  new Gauge({
    name,
    help,
    registers: [m.registry],
    collect() {
      this.set(read());
    },
  });
}

/** The command queue's backlog (src/modules/ordering/repo.ts pendingCount). */
export function registerQueueGauges(m: BoxMetrics, queueDepth: () => number): void {
  gauge(m, 'venue_box_command_queue_depth', 'Order commands confirmed and not yet processed.', queueDepth);
}

/** The socket hub's (src/ws/hub.ts). */
export function registerSocketGauges(m: BoxMetrics, hub: { socketCount(): number; bufferedBytes(): number }): void {
  gauge(m, 'venue_box_sockets_open', 'Open sockets (/ordering-api/ws).', () => hub.socketCount());
  gauge(m, 'venue_box_socket_buffered_bytes', "Bytes waiting in the sockets' send buffers, all together.", () =>
    hub.bufferedBytes(),
  );
}

/** Each printer's queue and status (src/modules/printing/service.ts). */
export function registerPrinterGauges(m: BoxMetrics, read: () => PrinterHealth): void {
  // One look per scrape at what several gauges share (a scrape collects every metric in the same tick).
  const printers = perScrape(read);
  const registers = [m.registry];
  new Gauge({
    name: 'venue_box_print_queue_depth',
    help: 'Print jobs queued for each printer.',
    labelNames: ['printer'],
    registers,
    collect() {
      this.reset();
      for (const p of printers()) this.set({ printer: p.name }, p.queueDepth);
    },
  });
  new Gauge({
    name: 'venue_box_printer_status',
    help: "Each printer's status: 1 for the status it has, 0 for the others.",
    labelNames: ['printer', 'status'],
    registers,
    collect() {
      this.reset();
      for (const p of printers())
        for (const s of PRINTER_STATUSES) this.set({ printer: p.name, status: s }, p.status === s ? 1 : 0);
    },
  });
}

/** Sync to the central (src/modules/sync/status.ts). */
export function registerSyncGauges(m: BoxMetrics, read: () => SyncHealth): void {
  const sync = perScrape(read);
  const syncGauge = (name: string, help: string, value: (s: SyncHealth) => number) =>
    gauge(m, name, help, () => value(sync()));
  syncGauge('venue_box_sync_enrolled', '1 once the box is enrolled at a central (venue-box sync enrol).', (s) =>
    Number(s.enrolled),
  );
  syncGauge('venue_box_sync_backlog_events', 'Events not yet acknowledged by the central.', (s) => s.backlog);
  syncGauge(
    'venue_box_sync_oldest_unsynced_age_seconds',
    'Age of the oldest unacknowledged event (0: none): the sync lag.',
    (s) => s.oldestUnsyncedAgeS ?? 0,
  );
  syncGauge(
    'venue_box_sync_last_success_timestamp_seconds',
    'When the central last acknowledged a batch (0: never).',
    (s) => (s.lastSuccessMs ?? 0) / 1000,
  );
  syncGauge(
    'venue_box_sync_dead_letters',
    'Events the central refused for good (docs/sync.md "Sync to the central node").',
    (s) => s.deadLetters,
  );
}

/** The data disk's free space (src/modules/storage/disk-watchdog.ts). */
export function registerDiskGauges(m: BoxMetrics, read: () => DiskHealth): void {
  const disk = perScrape(read);
  const diskGauge = (name: string, help: string, value: (d: DiskHealth) => number) =>
    gauge(m, name, help, () => value(disk()));
  diskGauge(
    'venue_box_disk_free_bytes',
    "Free bytes of the data directory's disk (for an unprivileged writer).",
    (d) => (Number.isFinite(d.freeBytes) ? d.freeBytes : 0),
  );
  diskGauge(
    'venue_box_disk_min_free_bytes',
    'storage.minFreeBytes: below it writes are refused.',
    (d) => d.minFreeBytes,
  );
  diskGauge('venue_box_disk_warn_free_bytes', 'storage.warnFreeBytes: below it the log warns.', (d) => d.warnFreeBytes);
  diskGauge('venue_box_disk_low', '1 while free space is below storage.warnFreeBytes (or the floor).', (d) =>
    Number(d.level !== 'ok'),
  );
  diskGauge(
    'venue_box_disk_full',
    '1 while free space is below storage.minFreeBytes: writes get 503 storageFull.',
    (d) => Number(d.level === 'full'),
  );
}

/** `fn`'s value, taken once per turn of the event loop: every collect callback of one scrape shares it. */
export function perScrape<T>(fn: () => T): () => T {
  let value: { v: T } | undefined;
  return () => {
    if (!value) {
      value = { v: fn() };
      setImmediate(() => {
        value = undefined;
      });
    }
    return value.v;
  };
}
