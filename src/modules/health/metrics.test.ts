import { afterEach, expect, test } from 'vitest';
import { parseMetrics, seriesValue, sampleValue } from '../../../test/support/prometheus.js';
import {
  type BoxMetrics,
  createBoxMetrics,
  type DiskHealth,
  type PrinterHealth,
  registerDiskGauges,
  registerPrinterGauges,
  registerQueueGauges,
  registerSocketGauges,
  registerSyncGauges,
  type SyncHealth,
} from './metrics.js';

/** Every number the box's parts register (src/box/*.ts), faked. */
interface MetricSources {
  version: string;
  commandKinds: readonly string[];
  queueDepth(): number;
  socketsOpen(): number;
  socketBufferedBytes(): number;
  printers(): PrinterHealth;
  sync(): SyncHealth;
  disk(): DiskHealth;
}

const open: BoxMetrics[] = [];
afterEach(() => {
  for (const m of open.splice(0)) m.close();
});

function fakeSources(over: Partial<MetricSources> = {}) {
  const calls = { sync: 0, disk: 0, printers: 0 };
  const sources: MetricSources = {
    version: '9.9.9',
    commandKinds: ['new', 'append'],
    queueDepth: () => 3,
    socketsOpen: () => 2,
    socketBufferedBytes: () => 100,
    printers: () => {
      calls.printers++;
      return [{ name: 'kitchen', status: 'paperOut', queueDepth: 4 }];
    },
    sync: () => {
      calls.sync++;
      return { enrolled: true, backlog: 7, oldestUnsyncedAgeS: 12, lastSuccessMs: 1_700_000_000_000, deadLetters: 0 };
    },
    disk: () => {
      calls.disk++;
      return { freeBytes: 5e9, level: 'low', minFreeBytes: 64, warnFreeBytes: 256 };
    },
    ...over,
  };
  return { sources, calls };
}

const metrics = (sources: MetricSources) => {
  const m = createBoxMetrics(sources);
  registerQueueGauges(m, sources.queueDepth);
  registerSocketGauges(m, { socketCount: sources.socketsOpen, bufferedBytes: sources.socketBufferedBytes });
  registerPrinterGauges(m, sources.printers);
  registerSyncGauges(m, sources.sync);
  registerDiskGauges(m, sources.disk);
  open.push(m);
  return m;
};

test('every family of the box, its type, and values read from the sources at scrape time', async () => {
  const { sources, calls } = fakeSources();
  const m = metrics(sources);
  m.observer.confirmed(['new', 'append', 'append'], 0.004, 0.003);
  m.observer.processed(
    [
      { kind: 'new', outcome: 'applied', confirmedMs: 1000 },
      { kind: 'append', outcome: 'rejected', confirmedMs: 1000 },
    ],
    0.01,
    0.002,
    1020,
  );
  m.onCheckpoint({ seconds: 0.001, ok: true, walFrames: 42 });
  m.onCheckpoint({ seconds: 0.5, ok: false, walFrames: -1 });
  // Another process's checkpoint held the lock: neither a failure nor a frame count.
  m.onCheckpoint({ seconds: 0.001, ok: true, walFrames: -1 });
  m.onQueueHeld(0.004);
  m.onQueueHeld(1.5);
  m.onServiceRestart('sync sender');
  m.onServiceRestart('sync sender');
  m.onWalSync(0.0007);
  m.onWalSync(0.2);
  m.onWalSync(0.003);
  const text = await m.render();
  const f = parseMetrics(text);

  const types = Object.fromEntries(
    [...f.values()].filter((x) => x.name.startsWith('venue_box_')).map((x) => [x.name, x.type]),
  );
  expect(types).toEqual({
    venue_box_build_info: 'GAUGE',
    venue_box_commands_confirmed_total: 'COUNTER',
    venue_box_commands_processed_total: 'COUNTER',
    venue_box_command_push_latency_seconds: 'HISTOGRAM',
    venue_box_queue_transaction_duration_seconds: 'HISTOGRAM',
    venue_box_queue_commit_duration_seconds: 'HISTOGRAM',
    venue_box_wal_fsync_duration_seconds: 'HISTOGRAM',
    venue_box_wal_checkpoint_duration_seconds: 'HISTOGRAM',
    venue_box_wal_checkpoint_failures_total: 'COUNTER',
    venue_box_service_restarts_total: 'COUNTER',
    venue_box_wal_restart_hold_seconds: 'HISTOGRAM',
    venue_box_wal_frames: 'GAUGE',
    venue_box_event_loop_delay_p99_seconds: 'GAUGE',
    venue_box_event_loop_delay_max_seconds: 'GAUGE',
    venue_box_command_queue_depth: 'GAUGE',
    venue_box_sockets_open: 'GAUGE',
    venue_box_socket_buffered_bytes: 'GAUGE',
    venue_box_print_queue_depth: 'GAUGE',
    venue_box_printer_status: 'GAUGE',
    venue_box_sync_enrolled: 'GAUGE',
    venue_box_sync_backlog_events: 'GAUGE',
    venue_box_sync_oldest_unsynced_age_seconds: 'GAUGE',
    venue_box_sync_last_success_timestamp_seconds: 'GAUGE',
    venue_box_sync_dead_letters: 'GAUGE',
    venue_box_disk_free_bytes: 'GAUGE',
    venue_box_disk_min_free_bytes: 'GAUGE',
    venue_box_disk_warn_free_bytes: 'GAUGE',
    venue_box_disk_low: 'GAUGE',
    venue_box_disk_full: 'GAUGE',
  });
  expect(f.get('process_resident_memory_bytes')?.type).toBe('GAUGE');
  expect(sampleValue(f, 'venue_box_build_info', { version: '9.9.9' })).toBe(1);
  expect(sampleValue(f, 'venue_box_commands_confirmed_total', { kind: 'append' })).toBe(2);
  expect(sampleValue(f, 'venue_box_commands_processed_total', { kind: 'new', outcome: 'applied' })).toBe(1);
  expect(sampleValue(f, 'venue_box_commands_processed_total', { kind: 'append', outcome: 'rejected' })).toBe(1);
  // Known kinds have their series from the start.
  expect(sampleValue(f, 'venue_box_commands_processed_total', { kind: 'new', outcome: 'failed' })).toBe(0);
  const latency = f.get('venue_box_command_push_latency_seconds')!.metrics[0]!;
  expect([Number(latency.count), Number(latency.sum)]).toEqual([2, 0.04]);
  expect(Number(latency.buckets!['0.01'])).toBe(0);
  expect(Number(latency.buckets!['0.025'])).toBe(2);
  for (const phase of ['confirm', 'process']) {
    expect(seriesValue(text, `venue_box_queue_commit_duration_seconds_count{phase="${phase}"}`)).toBe(1);
    expect(seriesValue(text, `venue_box_queue_transaction_duration_seconds_count{phase="${phase}"}`)).toBe(1);
  }
  expect(seriesValue(text, 'venue_box_queue_commit_duration_seconds_sum{phase="confirm"}')).toBe(0.003);
  expect(sampleValue(f, 'venue_box_wal_frames')).toBe(42);
  expect(sampleValue(f, 'venue_box_wal_checkpoint_failures_total')).toBe(1);
  expect(sampleValue(f, 'venue_box_service_restarts_total', { service: 'sync sender' })).toBe(2);
  expect(Number(f.get('venue_box_wal_checkpoint_duration_seconds')!.metrics[0]!.count)).toBe(3);
  const holds = f.get('venue_box_wal_restart_hold_seconds')!.metrics[0]!;
  expect([holds.count, holds.buckets!['0.005'], holds.buckets!['1'], holds.buckets!['2.5']].map(Number)).toEqual([
    2, 1, 1, 2,
  ]);
  const fsyncs = f.get('venue_box_wal_fsync_duration_seconds')!.metrics[0]!;
  expect(
    [fsyncs.count, fsyncs.buckets!['0.001'], fsyncs.buckets!['0.005'], fsyncs.buckets!['0.25']].map(Number),
  ).toEqual([3, 1, 2, 3]);
  expect(sampleValue(f, 'venue_box_command_queue_depth')).toBe(3);
  expect(sampleValue(f, 'venue_box_sockets_open')).toBe(2);
  expect(sampleValue(f, 'venue_box_print_queue_depth', { printer: 'kitchen' })).toBe(4);
  expect(sampleValue(f, 'venue_box_printer_status', { printer: 'kitchen', status: 'paperOut' })).toBe(1);
  expect(sampleValue(f, 'venue_box_printer_status', { printer: 'kitchen', status: 'ok' })).toBe(0);
  expect(sampleValue(f, 'venue_box_sync_backlog_events')).toBe(7);
  expect(sampleValue(f, 'venue_box_sync_oldest_unsynced_age_seconds')).toBe(12);
  expect(sampleValue(f, 'venue_box_sync_last_success_timestamp_seconds')).toBe(1_700_000_000);
  expect(sampleValue(f, 'venue_box_disk_free_bytes')).toBe(5e9);
  expect([sampleValue(f, 'venue_box_disk_low'), sampleValue(f, 'venue_box_disk_full')]).toEqual([1, 0]);
  // Five sync gauges, five disk gauges, two printer families: one look at each source per scrape.
  expect(calls).toEqual({ sync: 1, disk: 1, printers: 1 });
  await new Promise((r) => setImmediate(r));
  await m.render();
  expect(calls).toEqual({ sync: 2, disk: 2, printers: 2 });
});

test('two boxes in one process keep their own metrics', async () => {
  const a = metrics(fakeSources({ socketsOpen: () => 1 }).sources);
  const b = metrics(fakeSources({ socketsOpen: () => 5 }).sources);
  a.observer.confirmed(['new'], 0.001, 0.001);
  const [fa, fb] = [parseMetrics(await a.render()), parseMetrics(await b.render())];
  expect(sampleValue(fa, 'venue_box_commands_confirmed_total', { kind: 'new' })).toBe(1);
  expect(sampleValue(fb, 'venue_box_commands_confirmed_total', { kind: 'new' })).toBe(0);
  expect([sampleValue(fa, 'venue_box_sockets_open'), sampleValue(fb, 'venue_box_sockets_open')]).toEqual([1, 5]);
});

test('a printer that goes away leaves no stale series; a disk never measured reads 0 free, full 1', async () => {
  let printers = [
    { name: 'kitchen', status: 'ok' as const, queueDepth: 0 },
    { name: 'bar', status: 'offline' as const, queueDepth: 2 },
  ];
  const m = metrics(
    fakeSources({
      printers: () => printers,
      disk: () => ({ freeBytes: Number.POSITIVE_INFINITY, level: 'full', minFreeBytes: 64, warnFreeBytes: 256 }),
    }).sources,
  );
  expect(sampleValue(parseMetrics(await m.render()), 'venue_box_print_queue_depth', { printer: 'bar' })).toBe(2);
  printers = printers.slice(0, 1);
  await new Promise((r) => setImmediate(r));
  const f = parseMetrics(await m.render());
  expect(f.get('venue_box_print_queue_depth')!.metrics.map((s) => s.labels?.printer)).toEqual(['kitchen']);
  expect([sampleValue(f, 'venue_box_disk_free_bytes'), sampleValue(f, 'venue_box_disk_full')]).toEqual([0, 1]);
});

test('only counters end in _total (promtool check metrics refuses any other); the per-type families stay', async () => {
  const f = parseMetrics(await metrics(fakeSources().sources).render());
  const misnamed = [...f.values()].filter((family) => family.name.endsWith('_total') && family.type !== 'COUNTER');
  expect(misnamed.map((family) => family.name)).toEqual([]);
  expect(f.get('nodejs_active_handles')?.type).toBe('GAUGE');
  expect(f.get('nodejs_active_resources')?.type).toBe('GAUGE');
});
