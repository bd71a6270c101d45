import { afterEach, describe, expect, test } from 'vitest';
import { startTestBox, type TestBox } from './support/box.js';
import { contractsOf } from './support/contracts.js';
import { parseMetrics, sampleValue } from './support/prometheus.js';
import { freePort } from './support/ports.js';
import { type Pair, startPair } from './support/standby.js';
import { syncCli } from './support/sync.js';

// Where a pair's state shows besides `venue-box standby status` (docs/operations.md "A standby box"): /readyz,
// /metrics and `venue-box sync status` (the manager screen is in test/screens.test.ts).

const boxes: TestBox[] = [];
afterEach(async () => {
  for (const b of boxes.splice(0)) await b.stop('SIGKILL');
});
const METRICS = { metrics: { allowAddresses: ['127.0.0.0/8'] } };

async function syncStatusOf(box: TestBox, port: number) {
  const text = await syncCli(['status', '--data-dir', box.dataDir, '--port', String(port)]);
  expect(text.code, text.stderr).toBe(0);
  const json = await syncCli(['status', '--data-dir', box.dataDir, '--port', String(port), '--json']);
  expect(json.code, json.stderr).toBe(0);
  return {
    line: /^standby .*$/m.exec(text.stdout)?.[0],
    standby: (JSON.parse(json.stdout) as { standby: unknown }).standby,
  };
}

describe('a box never paired', () => {
  test('sync status says single: the running box its state, a stopped one "stopped"', async () => {
    const box = await startTestBox();
    boxes.push(box);
    const running = await syncStatusOf(box, box.port);
    expect(running.line).toBe('standby          single, alone');
    expect(running.standby).toEqual({
      role: 'single',
      state: 'alone',
      peer: null,
      lagBytes: 0,
      lagSeconds: 0,
      lastTakeoverAt: null,
    });
    // Nothing answers on this port: the data directory's word.
    const stopped = await syncStatusOf(box, await freePort());
    expect(stopped.line).toBe('standby          single, stopped');
    expect(stopped.standby).toMatchObject({ role: 'single', state: 'stopped', peer: null });
  });
});

describe('a pair in step', () => {
  test("the primary's /readyz, /metrics and sync status say synchronous, with its standby's address", async () => {
    const p: Pair = await startPair({ config: METRICS });
    boxes.push(p.primary, p.standby);
    const peer = `http://127.0.0.1:${p.standbyPort}`;

    const ready = await p.primary.get('/readyz');
    const body = (await contractsOf(p.primary)).response('get', '/readyz', 200, await ready.json());
    expect(body).toMatchObject({
      status: 'ready',
      standby: { role: 'primary', state: 'synchronous', peer, lastTakeoverAt: null },
    });

    const f = parseMetrics(await (await p.primary.get('/metrics')).text());
    expect(sampleValue(f, 'venue_box_standby_role', { role: 'primary' })).toBe(1);
    expect(sampleValue(f, 'venue_box_standby_connected')).toBe(1);
    expect(sampleValue(f, 'venue_box_standby_synchronous')).toBe(1);
    // The snapshot and the WAL since went to the standby.
    expect(sampleValue(f, 'venue_box_standby_replicated_bytes')).toBeGreaterThan(0);

    const s = await syncStatusOf(p.primary, p.primaryPort);
    expect(s.line).toBe('standby          primary, synchronous');
    expect(s.standby).toMatchObject({ role: 'primary', state: 'synchronous', peer });
    // Another box's port does not speak for this data directory: its state file does.
    const other = await syncStatusOf(p.primary, p.standbyPort);
    expect(other.line).toBe('standby          primary, stopped');
  }, 60_000);
});
