import type { Logger } from '../../../log.js';
import { AppError, invalidField, notFound } from '../../../shared/errors.js';
import { newId } from '../../../shared/ids.js';
import { type InstallWindow, RELEASE_PATHS, type ReleaseTarget } from '../../../shared/release-schemas.js';
import { inTransaction, type Pool } from '../../db/pool.js';
import { createReleaseRepo, type DeviceProgram, type PatchRow, type ReleaseRow } from './repo.js';
import { createRolloutRepo, type RolloutRow } from './rollout-repo.js';
import {
  advanceDueAtMs,
  countStates,
  type FleetDevice,
  haltReason,
  offersTo,
  type Selection,
  selectedDevices,
  shouldAdvance,
  stageMembers,
} from './rules.js';

export interface RolloutInput {
  version: string;
  devices: Selection;
  startsAt?: string;
  window?: InstallWindow;
  stages?: number[];
  stageMinutes?: number;
  haltShare?: number;
}

/** The asking box, as its signed request and its last hello name it. */
export interface AskingDevice {
  tenantId: string;
  deviceId: string;
  venueId: string;
  version: string | null;
  arch: string | null;
}

const DEFAULTS = { stages: [10, 100], stageMinutes: 60, haltShare: 0.2, window: 'closed' as InstallWindow };
/** A tenant's rollout, its stage's members and its releases are reused this long (and until a change is notified). */
const TARGET_CACHE_MS = 5_000;
/** The long poll checks a due stage advance at most this often per tenant. */
const ADVANCE_CHECK_MS = 5_000;

const fleetOf = (programs: DeviceProgram[]): FleetDevice[] =>
  programs.map((p) => ({ id: p.deviceId, venue: p.venueId, version: p.version, report: p.report }));

export const rolloutView = (r: RolloutRow) => ({
  id: r.id,
  version: r.version,
  devices: r.selection,
  startsAt: new Date(r.startsAtMs).toISOString(),
  window: r.window,
  stages: r.stages,
  stageMinutes: r.stageMinutes,
  haltShare: r.haltShare,
  state: r.state,
  haltReason: r.haltReason,
  stage: { index: r.stage, percent: r.stages[r.stage], startedAt: new Date(r.stageStartedAtMs).toISOString() },
  createdBy: r.createdBy,
  createdAt: new Date(r.createdAtMs).toISOString(),
  changedAt: new Date(r.changedAtMs).toISOString(),
});

interface TenantTargets {
  key: string;
  atMs: number;
  rollout: RolloutRow | undefined;
  members: Set<string>;
  releases: Map<string, ReleaseRow>;
  patches: PatchRow[];
}

/**
 * Rollouts (docs/sync.md "Releases and rollouts"): which devices of a tenant should run which version, in
 * stages. Every change (create, halt, resume, advance) notifies 'catalogue' in its transaction, so every box's
 * long poll answers at COMMIT with its new target. Advance and halt are evaluated under the rollout's row lock
 * when a box reports in its hello and when a due stage is seen by the long poll.
 */
export function createRolloutService(
  pool: Pool,
  o: { now: () => number; log: Logger; generation?: (tenantId: string) => string },
) {
  const repo = createRolloutRepo(pool);
  const releases = createReleaseRepo(pool);
  const cache = new Map<string, TenantTargets>();
  const loading = new Map<string, Promise<TenantTargets>>();
  const lastAdvanceCheck = new Map<string, number>();

  /** Runs a change of the tenant's rollouts in one transaction with its notification; the cache forgets the tenant. */
  async function change<T>(
    tenantId: string,
    fn: (tx: ReturnType<typeof createRolloutRepo>, devices: () => Promise<FleetDevice[]>) => Promise<T>,
  ) {
    try {
      return await inTransaction(pool, async (client) => {
        // One change of a tenant's rollouts at a time: two new rollouts at once would both supersede the one before
        // and collide on the tenant's one current rollout.
        await client.query('SELECT 1 FROM tenants WHERE tenant_id = $1 FOR NO KEY UPDATE', [tenantId]);
        const result = await fn(createRolloutRepo(client), async () =>
          fleetOf(await createReleaseRepo(client).devicePrograms(tenantId)),
        );
        await createReleaseRepo(client).notify(tenantId);
        return result;
      });
    } finally {
      cache.delete(tenantId);
      loading.delete(tenantId);
    }
  }

  async function evaluate(tenantId: string): Promise<void> {
    const nowMs = o.now();
    let changed = false;
    await inTransaction(pool, async (client) => {
      const tx = createRolloutRepo(client);
      const r = await tx.current(tenantId, true);
      if (r?.state !== 'active' || r.startsAtMs > nowMs) return;
      const fleet = fleetOf(await createReleaseRepo(client).devicePrograms(tenantId));
      const reason = haltReason(r, fleet);
      if (reason) {
        await tx.update({ ...r, state: 'halted', haltReason: reason }, nowMs);
        o.log.warn({ tenant: tenantId, rollout: r.id, reason }, 'rollout halted');
      } else if (shouldAdvance(r, selectedDevices(tenantId, fleet, r.selection), nowMs)) {
        await tx.update({ ...r, stage: r.stage + 1, stageStartedAtMs: nowMs }, nowMs);
        o.log.info({ tenant: tenantId, rollout: r.id, stage: r.stages[r.stage + 1] }, 'rollout advanced');
      } else return;
      await createReleaseRepo(client).notify(tenantId);
      changed = true;
    });
    if (changed) {
      cache.delete(tenantId);
      loading.delete(tenantId);
    }
  }

  async function load(tenantId: string): Promise<TenantTargets> {
    const key = o.generation?.(tenantId) ?? '';
    const rollout = await repo.current(tenantId);
    const members = rollout
      ? stageMembers(
          rollout,
          selectedDevices(tenantId, fleetOf(await releases.devicePrograms(tenantId)), rollout.selection),
        )
      : new Set<string>();
    const ready = rollout ? await releases.readyOfVersion(tenantId, rollout.version) : [];
    const patches =
      ready.length > 0
        ? await releases.patches(
            tenantId,
            ready.map((r) => r.sha256),
          )
        : [];
    return { key, atMs: o.now(), rollout, members, releases: new Map(ready.map((r) => [r.arch, r])), patches };
  }

  /** The tenant's targets, shared by every poll of the tenant for a few seconds or until a change. */
  async function targets(tenantId: string): Promise<TenantTargets> {
    const cached = cache.get(tenantId);
    const key = o.generation?.(tenantId) ?? '';
    if (cached && cached.key === key && o.now() - cached.atMs < TARGET_CACHE_MS) return cached;
    let p = loading.get(tenantId);
    if (!p) {
      p = load(tenantId).finally(() => loading.delete(tenantId));
      loading.set(tenantId, p);
    }
    const fresh = await p;
    cache.set(tenantId, fresh);
    return fresh;
  }

  async function rolloutOf(tenantId: string, id: string): Promise<RolloutRow> {
    const r = await repo.rollout(tenantId, id);
    if (!r) throw notFound('rollout');
    return r;
  }

  return {
    async create(tenantId: string, userId: string, input: RolloutInput) {
      const nowMs = o.now();
      const startsAtMs = input.startsAt === undefined ? nowMs : Date.parse(input.startsAt);
      // Years 2000-9999: PostgreSQL has no year 0, and a date it cannot store must be a 400, never a 500.
      if (!(startsAtMs >= Date.UTC(2000, 0, 1) && startsAtMs < Date.UTC(10_000, 0, 1))) {
        throw invalidField('/startsAt', 'startsAt must be an ISO date-time of years 2000 to 9999');
      }
      const stages = input.stages ?? DEFAULTS.stages;
      if (stages.some((s, i) => i > 0 && s <= stages[i - 1]!) || stages[stages.length - 1] !== 100) {
        throw invalidField('/stages', 'stages must ascend and end in 100');
      }
      if ((await releases.readyOfVersion(tenantId, input.version)).length === 0) {
        throw invalidField('/version', `no release of version ${input.version} is ready at the central`);
      }
      const row: RolloutRow = {
        tenantId,
        id: newId(),
        version: input.version,
        selection: input.devices,
        startsAtMs,
        window: input.window ?? DEFAULTS.window,
        stages,
        stage: 0,
        stageStartedAtMs: startsAtMs,
        stageMinutes: input.stageMinutes ?? DEFAULTS.stageMinutes,
        haltShare: input.haltShare ?? DEFAULTS.haltShare,
        state: 'active',
        haltReason: null,
        forgiven: [],
        createdBy: userId,
        createdAtMs: nowMs,
        changedAtMs: nowMs,
      };
      await change(tenantId, async (tx) => {
        await tx.supersede(tenantId, nowMs);
        await tx.insert(row);
      });
      return rolloutView(row);
    },

    list: async (tenantId: string) => (await repo.list(tenantId)).map(rolloutView),

    /** One rollout with its selected devices counted by their state on it (after a due advance or halt). */
    async get(tenantId: string, id: string) {
      await evaluate(tenantId);
      const r = await rolloutOf(tenantId, id);
      const selected = selectedDevices(tenantId, fleetOf(await releases.devicePrograms(tenantId)), r.selection);
      const members = stageMembers(r, selected);
      return {
        ...rolloutView(r),
        selected: selected.length,
        inStage: members.size,
        running: selected.filter((d) => d.version === r.version).length,
        counts: countStates(r, selected),
      };
    },

    async halt(tenantId: string, id: string, reason: string | undefined) {
      const r = await change(tenantId, async (tx) => {
        const r = await tx.rollout(tenantId, id, true);
        if (!r) throw notFound('rollout');
        if (r.state === 'superseded') throw AppError.of('conflict', 'a superseded rollout cannot be halted');
        const halted = { ...r, state: 'halted' as const, haltReason: reason ?? 'halted by headquarters' };
        if (r.state === 'active') await tx.update(halted, o.now());
        return r.state === 'active' ? halted : r;
      });
      return rolloutView(r);
    },

    /** Active again; the rollbacks seen so far no longer count towards a halt, and the stage's time starts again. */
    async resume(tenantId: string, id: string) {
      const r = await change(tenantId, async (tx, devices) => {
        const r = await tx.rollout(tenantId, id, true);
        if (!r) throw notFound('rollout');
        if (r.state === 'superseded') throw AppError.of('conflict', 'a superseded rollout cannot be resumed');
        if (r.state === 'active') return r;
        const forgiven = (await devices())
          .filter((d) => d.report?.rollout === r.id && d.report.state === 'rolledBack')
          .map((d) => d.id);
        const resumed = {
          ...r,
          state: 'active' as const,
          haltReason: null,
          forgiven: [...new Set([...r.forgiven, ...forgiven])],
          stageStartedAtMs: Math.max(o.now(), r.startsAtMs),
        };
        await tx.update(resumed, o.now());
        return resumed;
      });
      return rolloutView(r);
    },

    /** After a hello with an update report: the tenant's rollout may halt or advance. */
    evaluate,

    /** What the long poll tells this box to run, or null (docs/sync.md "Releases and rollouts"). */
    async targetFor(device: AskingDevice): Promise<ReleaseTarget | null> {
      let t = await targets(device.tenantId);
      const due = t.rollout && advanceDueAtMs(t.rollout);
      const nowMs = o.now();
      if (
        due !== undefined &&
        due <= nowMs &&
        nowMs - (lastAdvanceCheck.get(device.tenantId) ?? 0) >= ADVANCE_CHECK_MS
      ) {
        lastAdvanceCheck.set(device.tenantId, nowMs);
        await evaluate(device.tenantId);
        t = await targets(device.tenantId);
      }
      const r = t.rollout;
      const fleetDevice: FleetDevice = {
        id: device.deviceId,
        venue: device.venueId,
        version: device.version,
        report: null,
      };
      if (!r || !offersTo(r, t.members, fleetDevice, nowMs) || device.arch === null) return null;
      const release = t.releases.get(device.arch);
      if (!release) return null;
      return {
        rollout: r.id,
        release: release.signed,
        url: RELEASE_PATHS.binary(release.sha256),
        patches: t.patches
          .filter((p) => p.toSha256 === release.sha256)
          .map((p) => ({ from: p.fromSha256, size: p.size, url: RELEASE_PATHS.patch(release.sha256, p.fromSha256) })),
        window: r.window,
      };
    },
  };
}

export type RolloutService = ReturnType<typeof createRolloutService>;
