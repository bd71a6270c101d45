import { afterEach, expect, test } from 'vitest';
import { parseMetrics, sampleValue } from '../../../test/support/prometheus.js';
import { type BoxMetrics, createBoxMetrics } from '../health/metrics.js';
import { registerStandbyGauges } from './metrics.js';
import type { StandbyStatus } from './status.js';

const open: BoxMetrics[] = [];
afterEach(() => {
  for (const m of open.splice(0)) m.close();
});

const single: StandbyStatus = {
  role: 'single',
  boxId: 'b1',
  term: 0,
  peer: null,
  state: 'alone',
  connected: false,
  lagBytes: 0,
  lagSeconds: 0,
  replicatedBytes: 0,
  stalls: 0,
  lastTakeoverAt: null,
  primarySilentMs: null,
  refusal: null,
};

function scrapeOf(read: () => StandbyStatus) {
  const m = createBoxMetrics({ version: '9.9.9', commandKinds: [] });
  open.push(m);
  registerStandbyGauges(m, read);
  return async () => {
    // A new turn of the event loop: the next scrape reads the status again.
    await new Promise((r) => setImmediate(r));
    return parseMetrics(await m.render());
  };
}

const values = (f: ReturnType<typeof parseMetrics>) =>
  Object.fromEntries(
    [
      'term',
      'connected',
      'synchronous',
      'lag_bytes',
      'lag_seconds',
      'replicated_bytes',
      'stalls',
      'last_takeover_timestamp_seconds',
    ].map((n) => [n, sampleValue(f, `venue_box_standby_${n}`)]),
  );

const rolesOf = (f: ReturnType<typeof parseMetrics>) =>
  f.get('venue_box_standby_role')!.metrics.map((s) => s.labels?.role);

test('a box never paired: role single, not synchronous, no lag, never taken over; every family a gauge', async () => {
  const f = await scrapeOf(() => single)();
  expect([...f.values()].filter((x) => x.name.startsWith('venue_box_standby_')).map((x) => [x.name, x.type])).toEqual(
    [
      'role',
      'term',
      'connected',
      'synchronous',
      'lag_bytes',
      'lag_seconds',
      'replicated_bytes',
      'stalls',
      'last_takeover_timestamp_seconds',
    ].map((n) => [`venue_box_standby_${n}`, 'GAUGE']),
  );
  expect(rolesOf(f)).toEqual(['single']);
  expect(sampleValue(f, 'venue_box_standby_role', { role: 'single' })).toBe(1);
  expect(values(f)).toEqual({
    term: 0,
    connected: 0,
    synchronous: 0,
    lag_bytes: 0,
    lag_seconds: 0,
    replicated_bytes: 0,
    stalls: 0,
    last_takeover_timestamp_seconds: 0,
  });
});

test('a primary in step, then behind: values read at each scrape, one status read per scrape', async () => {
  let reads = 0;
  let status: StandbyStatus = {
    ...single,
    role: 'primary',
    term: 2,
    peer: { boxId: 'b2', url: 'http://10.0.0.2:8080' },
    state: 'synchronous',
    connected: true,
    replicatedBytes: 123_456,
    stalls: 1,
    lastTakeoverAt: '2026-11-27T10:00:00.000Z',
  };
  const scrape = scrapeOf(() => {
    reads++;
    return status;
  });
  const first = await scrape();
  expect(sampleValue(first, 'venue_box_standby_role', { role: 'primary' })).toBe(1);
  expect(values(first)).toEqual({
    term: 2,
    connected: 1,
    synchronous: 1,
    lag_bytes: 0,
    lag_seconds: 0,
    replicated_bytes: 123_456,
    stalls: 1,
    last_takeover_timestamp_seconds: Date.parse('2026-11-27T10:00:00.000Z') / 1000,
  });
  expect(reads).toBe(1);

  status = { ...status, state: 'catchingUp', lagBytes: 65_536, lagSeconds: 2.5, stalls: 3 };
  const second = await scrape();
  expect(values(second)).toMatchObject({
    synchronous: 0,
    connected: 1,
    lag_bytes: 65_536,
    lag_seconds: 2.5,
    stalls: 3,
  });
  expect(rolesOf(second)).toEqual(['primary']);
  expect(reads).toBe(2);
});
