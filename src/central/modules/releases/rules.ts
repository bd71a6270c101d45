/**
 * The rules of a rollout (docs/sync.md "Releases and rollouts"), pure: which devices it selects, which of them
 * the current stage holds, when it advances, when it halts by itself, and what HQ sees counted. The service
 * applies them under the rollout's row lock; these tests beside them pin the arithmetic.
 */
import { stableBucket } from '../../../shared/release.js';
import { UPDATE_STATES, type UpdateReport, type UpdateState } from '../../../shared/release-schemas.js';

export type Selection = { all: true } | { venues: string[] } | { percent: number };
export type RolloutState = 'active' | 'halted' | 'superseded';

/** What the rules read of a rollout. */
export interface RolloutRules {
  id: string;
  version: string;
  selection: Selection;
  startsAtMs: number;
  /** Cumulative percentages of the selected devices, ascending, the last 100. */
  stages: number[];
  stage: number;
  stageStartedAtMs: number;
  stageMinutes: number;
  haltShare: number;
  state: RolloutState;
  /** Devices whose rollback headquarters had seen when it resumed the rollout: they no longer count for a halt. */
  forgiven: string[];
}

/** What the rules read of a device: its last hello. */
export interface FleetDevice {
  id: string;
  venue: string;
  /** The program it runs: its update report's version, else its hello's; null before its first hello. */
  version: string | null;
  report: UpdateReport | null;
}

export type StateCounts = Record<UpdateState | 'pending', number>;

/** The selected devices in the order stages take them: lowest stable bucket first (the device id breaks a tie). */
export function selectedDevices(tenantId: string, devices: FleetDevice[], selection: Selection): FleetDevice[] {
  const ranked = devices.map((d) => ({ d, bucket: stableBucket(tenantId, d.id) }));
  const chosen = ranked.filter(({ d, bucket }) => {
    if ('all' in selection) return true;
    if ('venues' in selection) return selection.venues.includes(d.venue);
    return bucket < selection.percent * 100;
  });
  chosen.sort((a, b) => a.bucket - b.bucket || (a.d.id < b.d.id ? -1 : a.d.id > b.d.id ? 1 : 0));
  return chosen.map((c) => c.d);
}

/** How many of `n` selected devices a stage of `percent`% holds: rounded up, so a canary is never empty. */
export const stageSize = (percent: number, n: number): number =>
  n === 0 ? 0 : Math.min(n, Math.ceil((percent * n) / 100 - 1e-9));

/** The ids the rollout's current stage holds, of `selected` as selectedDevices ordered them. */
export function stageMembers(rollout: Pick<RolloutRules, 'stages' | 'stage'>, selected: FleetDevice[]): Set<string> {
  const percent = rollout.stages[Math.min(rollout.stage, rollout.stages.length - 1)]!;
  return new Set(selected.slice(0, stageSize(percent, selected.length)).map((d) => d.id));
}

const reportsOn = (rollout: Pick<RolloutRules, 'id'>, d: FleetDevice): UpdateReport | undefined =>
  d.report?.rollout === rollout.id ? d.report : undefined;

const healthyOn = (rollout: Pick<RolloutRules, 'id' | 'version'>, d: FleetDevice): boolean => {
  const r = reportsOn(rollout, d);
  return r?.state === 'healthy' && (r.version === rollout.version || r.target === rollout.version);
};

/**
 * Why the rollout halts itself, or undefined: among the devices reporting on it, the share that rolled back out
 * of those that rolled back or are healthy is above haltShare (a forgiven rollback counts as neither).
 */
export function haltReason(rollout: RolloutRules, devices: FleetDevice[]): string | undefined {
  if (rollout.state !== 'active') return undefined;
  let healthy = 0;
  let rolledBack = 0;
  for (const d of devices) {
    const state = reportsOn(rollout, d)?.state;
    if (state === 'healthy') healthy++;
    else if (state === 'rolledBack' && !rollout.forgiven.includes(d.id)) rolledBack++;
  }
  if (rolledBack === 0 || rolledBack / (healthy + rolledBack) <= rollout.haltShare) return undefined;
  return `${rolledBack} of ${healthy + rolledBack} devices reporting rolled back (more than the halt share ${rollout.haltShare})`;
}

/**
 * Whether the rollout moves to its next stage: active, not at its last, stageMinutes passed since the stage
 * began, and a device of the stage is healthy on the target version.
 */
export function shouldAdvance(rollout: RolloutRules, selected: FleetDevice[], nowMs: number): boolean {
  if (rollout.state !== 'active' || rollout.stage >= rollout.stages.length - 1) return false;
  if (nowMs < rollout.stageStartedAtMs + rollout.stageMinutes * 60_000) return false;
  const members = stageMembers(rollout, selected);
  return selected.some((d) => members.has(d.id) && healthyOn(rollout, d));
}

/** When the current stage may advance at the earliest (ms), or undefined at the last stage. */
export const advanceDueAtMs = (rollout: RolloutRules): number | undefined =>
  rollout.state === 'active' && rollout.stage < rollout.stages.length - 1
    ? rollout.stageStartedAtMs + rollout.stageMinutes * 60_000
    : undefined;

/**
 * Whether the rollout names this device now: started, the device in the current stage; a halted rollout only
 * still names the devices of the stage that run its version already (the others get no target).
 */
export function offersTo(rollout: RolloutRules, members: Set<string>, device: FleetDevice, nowMs: number): boolean {
  if (rollout.state === 'superseded' || nowMs < rollout.startsAtMs || !members.has(device.id)) return false;
  return rollout.state === 'active' || device.version === rollout.version;
}

/**
 * The selected devices by their state on this rollout: each reporting on it counts under its state; `pending` is
 * those that have not reported on it and do not run its version.
 */
export function countStates(rollout: RolloutRules, selected: FleetDevice[]): StateCounts {
  const counts = Object.fromEntries([...UPDATE_STATES, 'pending'].map((s) => [s, 0])) as StateCounts;
  for (const d of selected) {
    const report = reportsOn(rollout, d);
    if (report) counts[report.state]++;
    else if (d.version !== rollout.version) counts.pending++;
  }
  return counts;
}
