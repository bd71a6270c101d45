import { describe, expect, test } from 'vitest';
import { stableBucket } from '../../../shared/release.js';
import type { UpdateReport } from '../../../shared/release-schemas.js';
import {
  countStates,
  type FleetDevice,
  haltReason,
  offersTo,
  type RolloutRules,
  selectedDevices,
  shouldAdvance,
  stageMembers,
  stageSize,
} from './rules.js';

const TENANT = 't1';
const NOW = Date.parse('2026-11-20T12:00:00Z');
const devices: FleetDevice[] = Array.from({ length: 40 }, (_, i) => ({
  id: `device-${i}`,
  venue: i % 2 === 0 ? 'venue-a' : 'venue-b',
  version: '1.0.0',
  report: null,
}));
const rollout = (over: Partial<RolloutRules> = {}): RolloutRules => ({
  id: 'r1',
  version: '1.1.0',
  selection: { all: true },
  startsAtMs: NOW - 3_600_000,
  stages: [10, 100],
  stage: 0,
  stageStartedAtMs: NOW - 3_600_000,
  stageMinutes: 60,
  haltShare: 0.2,
  state: 'active',
  forgiven: [],
  ...over,
});
const report = (state: UpdateReport['state'], over: Partial<UpdateReport> = {}): UpdateReport => ({
  version: state === 'healthy' ? '1.1.0' : '1.0.0',
  arch: 'x64',
  node: '24.0.0',
  state,
  target: '1.1.0',
  rollout: 'r1',
  since: NOW,
  ...over,
});
const withReports = (reports: Record<string, UpdateReport>): FleetDevice[] =>
  devices.map((d) => {
    const r = reports[d.id];
    return r ? { ...d, report: r, version: r.version } : d;
  });

describe('selection', () => {
  test('all, venues, or the devices whose stable bucket is under the percentage', () => {
    expect(selectedDevices(TENANT, devices, { all: true })).toHaveLength(40);
    expect(selectedDevices(TENANT, devices, { venues: ['venue-b'] }).every((d) => d.venue === 'venue-b')).toBe(true);
    const half = selectedDevices(TENANT, devices, { percent: 50 });
    expect(half.map((d) => d.id).sort()).toEqual(
      devices
        .filter((d) => stableBucket(TENANT, d.id) < 5000)
        .map((d) => d.id)
        .sort(),
    );
    // Stable: a bigger percentage keeps every device a smaller one picked.
    const quarter = selectedDevices(TENANT, devices, { percent: 25 }).map((d) => d.id);
    expect(quarter.every((id) => half.some((d) => d.id === id))).toBe(true);
  });

  test('ordered by bucket: a stage takes the lowest buckets', () => {
    const order = selectedDevices(TENANT, devices, { all: true }).map((d) => stableBucket(TENANT, d.id));
    expect(order).toEqual([...order].sort((a, b) => a - b));
  });
});

describe('stages', () => {
  test('a stage holds ceil(p% x N) devices, never none while any is selected', () => {
    expect(stageSize(10, 40)).toBe(4);
    expect(stageSize(10, 3)).toBe(1);
    expect(stageSize(1, 1)).toBe(1);
    expect(stageSize(33, 100)).toBe(33);
    expect(stageSize(100, 7)).toBe(7);
    expect(stageSize(10, 0)).toBe(0);
  });

  test('members are the first of the selected order; the next stage keeps them', () => {
    const selected = selectedDevices(TENANT, devices, { all: true });
    const canary = stageMembers(rollout(), selected);
    expect([...canary]).toEqual(selected.slice(0, 4).map((d) => d.id));
    const all = stageMembers(rollout({ stage: 1 }), selected);
    expect(all.size).toBe(40);
    expect([...canary].every((id) => all.has(id))).toBe(true);
  });

  test('advances after stageMinutes once a device of the stage is healthy on the target', () => {
    const selected = selectedDevices(TENANT, devices, { all: true });
    const canaryId = selected[0]!.id;
    const outsiderId = selected[10]!.id;
    const healthy = selectedDevices(TENANT, withReports({ [canaryId]: report('healthy') }), { all: true });
    expect(shouldAdvance(rollout(), healthy, NOW)).toBe(true);
    expect(shouldAdvance(rollout({ stageStartedAtMs: NOW - 59 * 60_000 }), healthy, NOW)).toBe(false);
    expect(shouldAdvance(rollout({ state: 'halted' }), healthy, NOW)).toBe(false);
    expect(shouldAdvance(rollout({ stage: 1 }), healthy, NOW)).toBe(false);
    expect(shouldAdvance(rollout(), selected, NOW)).toBe(false);
    // Healthy outside the stage, or on another rollout, or only downloading: no.
    const outside = selectedDevices(TENANT, withReports({ [outsiderId]: report('healthy') }), { all: true });
    expect(shouldAdvance(rollout(), outside, NOW)).toBe(false);
    const other = selectedDevices(TENANT, withReports({ [canaryId]: report('healthy', { rollout: 'r0' }) }), {
      all: true,
    });
    expect(shouldAdvance(rollout(), other, NOW)).toBe(false);
    const busy = selectedDevices(TENANT, withReports({ [canaryId]: report('downloading') }), { all: true });
    expect(shouldAdvance(rollout(), busy, NOW)).toBe(false);
    // stageMinutes 0: as soon as one is healthy.
    expect(shouldAdvance(rollout({ stageMinutes: 0, stageStartedAtMs: NOW }), healthy, NOW)).toBe(true);
  });
});

describe('halt', () => {
  test('halts when rolledBack / (healthy + rolledBack) exceeds haltShare', () => {
    const ids = devices.map((d) => d.id);
    const some = (healthy: number, rolledBack: number) =>
      withReports(
        Object.fromEntries([
          ...ids.slice(0, healthy).map((id) => [id, report('healthy')] as const),
          ...ids.slice(healthy, healthy + rolledBack).map((id) => [id, report('rolledBack')] as const),
          [ids[39]!, report('downloading')] as const,
        ]),
      );
    expect(haltReason(rollout(), some(0, 0))).toBeUndefined();
    expect(haltReason(rollout(), some(4, 1))).toBeUndefined(); // 0.2 is not above 0.2
    expect(haltReason(rollout(), some(3, 1))).toMatch(/^1 of 4 devices reporting rolled back/);
    expect(haltReason(rollout(), some(0, 1))).toMatch(/^1 of 1 /);
    expect(haltReason(rollout({ haltShare: 1 }), some(0, 5))).toBeUndefined();
    expect(haltReason(rollout({ state: 'halted' }), some(0, 5))).toBeUndefined();
    // Resumed after headquarters saw the rollback: it no longer counts, a new one does.
    expect(haltReason(rollout({ forgiven: [devices[0]!.id] }), some(0, 1))).toBeUndefined();
    expect(haltReason(rollout({ forgiven: [devices[0]!.id] }), some(0, 2))).toMatch(/^1 of 1 /);
  });
});

describe('targets and counts', () => {
  test('an active started rollout names its stage; a halted one only those on its version; a future one none', () => {
    const selected = selectedDevices(TENANT, devices, { all: true });
    const members = stageMembers(rollout(), selected);
    const [inStage, outside] = [selected[0]!, selected[20]!];
    expect(offersTo(rollout(), members, inStage, NOW)).toBe(true);
    expect(offersTo(rollout(), members, outside, NOW)).toBe(false);
    expect(offersTo(rollout({ startsAtMs: NOW + 1 }), members, inStage, NOW)).toBe(false);
    expect(offersTo(rollout({ state: 'halted' }), members, inStage, NOW)).toBe(false);
    expect(offersTo(rollout({ state: 'halted' }), members, { ...inStage, version: '1.1.0' }, NOW)).toBe(true);
    expect(offersTo(rollout({ state: 'superseded' }), members, inStage, NOW)).toBe(false);
  });

  test('counts each state of the devices reporting on it; pending is the rest not on its version', () => {
    const ids = devices.map((d) => d.id);
    const fleet = withReports({
      [ids[0]!]: report('healthy'),
      [ids[1]!]: report('rolledBack'),
      [ids[2]!]: report('downloading', { progress: { bytes: 1, total: 2 } }),
      [ids[3]!]: report('healthy', { rollout: 'r0' }),
    });
    fleet[4] = { ...fleet[4]!, version: '1.1.0' };
    const counts = countStates(rollout(), fleet);
    expect(counts).toMatchObject({ healthy: 1, rolledBack: 1, downloading: 1, idle: 0, pending: 35 });
  });
});
