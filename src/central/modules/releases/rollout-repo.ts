import type { InstallWindow } from '../../../shared/release-schemas.js';
import type { Queryable } from '../../db/pool.js';
import type { RolloutRules, RolloutState, Selection } from './rules.js';

export interface RolloutRow extends RolloutRules {
  tenantId: string;
  window: InstallWindow;
  haltReason: string | null;
  createdBy: string;
  createdAtMs: number;
  changedAtMs: number;
}

const ROLLOUT = `tenant_id, rollout_id, version, selection, starts_at, install_window, stages, stage_minutes, halt_share,
  stage, stage_started_at, state, halt_reason, forgiven, created_by, created_at, changed_at`;
// biome-ignore lint/suspicious/noExplicitAny: a pg row, whose columns are ROLLOUT's: typed by the mapping below.
const toRollout = (r: Record<string, any>): RolloutRow => ({
  tenantId: r.tenant_id,
  id: r.rollout_id,
  version: r.version,
  selection: r.selection as Selection,
  startsAtMs: (r.starts_at as Date).getTime(),
  window: r.install_window as InstallWindow,
  stages: r.stages as number[],
  stageMinutes: r.stage_minutes,
  haltShare: r.halt_share,
  stage: r.stage,
  stageStartedAtMs: (r.stage_started_at as Date).getTime(),
  state: r.state as RolloutState,
  haltReason: r.halt_reason,
  forgiven: r.forgiven as string[],
  createdBy: r.created_by,
  createdAtMs: (r.created_at as Date).getTime(),
  changedAtMs: (r.changed_at as Date).getTime(),
});

/** SQL of rollouts (migration 6): at most one of a tenant is not superseded, its current one. */
export function createRolloutRepo(db: Queryable) {
  return {
    async insert(r: RolloutRow): Promise<void> {
      await db.query(
        `INSERT INTO rollouts (tenant_id, rollout_id, version, selection, starts_at, install_window, stages, stage_minutes,
           halt_share, stage, stage_started_at, state, created_by, created_at, changed_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $14)`,
        [
          r.tenantId,
          r.id,
          r.version,
          JSON.stringify(r.selection),
          new Date(r.startsAtMs),
          JSON.stringify(r.window),
          JSON.stringify(r.stages),
          r.stageMinutes,
          r.haltShare,
          r.stage,
          new Date(r.stageStartedAtMs),
          r.state,
          r.createdBy,
          new Date(r.createdAtMs),
        ],
      );
    },
    /** The tenant's current rollout (active or halted); `lock`: held until the transaction ends. */
    async current(tenantId: string, lock = false): Promise<RolloutRow | undefined> {
      const { rows } = await db.query(
        `SELECT ${ROLLOUT} FROM rollouts WHERE tenant_id = $1 AND state <> 'superseded'${lock ? ' FOR UPDATE' : ''}`,
        [tenantId],
      );
      return rows[0] && toRollout(rows[0]);
    },
    async rollout(tenantId: string, id: string, lock = false): Promise<RolloutRow | undefined> {
      const { rows } = await db.query(
        `SELECT ${ROLLOUT} FROM rollouts WHERE tenant_id = $1 AND rollout_id = $2${lock ? ' FOR UPDATE' : ''}`,
        [tenantId, id],
      );
      return rows[0] && toRollout(rows[0]);
    },
    async list(tenantId: string): Promise<RolloutRow[]> {
      const { rows } = await db.query(
        `SELECT ${ROLLOUT} FROM rollouts WHERE tenant_id = $1 ORDER BY created_at DESC, rollout_id`,
        [tenantId],
      );
      return rows.map(toRollout);
    },
    /** Every rollout of the tenant still current becomes superseded: a new one takes its place. */
    async supersede(tenantId: string, atMs: number): Promise<void> {
      await db.query(
        `UPDATE rollouts SET state = 'superseded', changed_at = $2 WHERE tenant_id = $1 AND state <> 'superseded'`,
        [tenantId, new Date(atMs)],
      );
    },
    async update(
      r: Pick<RolloutRow, 'tenantId' | 'id' | 'state' | 'stage' | 'stageStartedAtMs' | 'haltReason' | 'forgiven'>,
      atMs: number,
    ): Promise<void> {
      await db.query(
        `UPDATE rollouts SET state = $3, stage = $4, stage_started_at = $5, halt_reason = $6, forgiven = $7, changed_at = $8
         WHERE tenant_id = $1 AND rollout_id = $2`,
        [
          r.tenantId,
          r.id,
          r.state,
          r.stage,
          new Date(r.stageStartedAtMs),
          r.haltReason,
          JSON.stringify(r.forgiven),
          new Date(atMs),
        ],
      );
    },
  };
}
