import { type Client, inTransaction, type Pool, type Queryable } from '../../db/pool.js';
import { createDeviceRepo } from '../devices/repo.js';
import { parseEvent, projectEvent, RuleBroken } from '../projections/project.js';
import { textSafe } from './repo.js';
import { isEventFault } from './service.js';

/**
 * Dead letters as headquarters sees and replays them (docs/sync.md "Dead letters"): an event the ingest set
 * aside (it broke a rule, the device's head moved past it) is projected again once its cause is fixed (a
 * warehouse or venue the central learnt since, a central that accepts what an older one refused). A replay
 * is the ingest's projection of the same bytes, under the device's head lock, so it never races a batch.
 */

/** A dead letter's id for people and the CLI: device ids are unique across tenants, seq within a device. */
export const deadLetterId = (deviceId: string, seq: number): string => `${deviceId}:${seq}`;

export interface DeadLetterView {
  id: string;
  tenant: string;
  device: string;
  seq: number;
  eventId: string | null;
  /** The event's kind as its envelope names it; null for one that is not JSON. */
  kind: string | null;
  reason: string;
  receivedAt: string;
  retries: number;
  retriedAt: string | null;
  /** When a replay projected it; null while it waits. */
  resolvedAt: string | null;
}

export interface DeadLetterFilter {
  tenant?: string;
  device?: string;
  /** Replayed ones too (they stay, as the record of what happened). */
  resolved?: boolean;
}

export type ReplayOutcome =
  | { id: string; outcome: 'replayed' }
  | { id: string; outcome: 'alreadyReplayed' }
  | { id: string; outcome: 'failed'; reason: string }
  | { id: string; outcome: 'unknown' };

interface Row {
  tenant_id: string;
  device_id: string;
  seq: number;
  event_id: string | null;
  reason: string;
  envelope: string;
  created_at: Date;
  retries: number;
  retried_at: Date | null;
  resolved_at: Date | null;
}

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

function kindOf(envelope: string): string | null {
  try {
    const kind = (JSON.parse(envelope) as { kind?: unknown } | null)?.kind;
    return typeof kind === 'string' ? kind.slice(0, 100) : null;
  } catch {
    return null;
  }
}

const view = (r: Row): DeadLetterView => ({
  id: deadLetterId(r.device_id, r.seq),
  tenant: r.tenant_id,
  device: r.device_id,
  seq: r.seq,
  eventId: r.event_id,
  kind: kindOf(r.envelope),
  reason: r.reason,
  receivedAt: r.created_at.toISOString(),
  retries: r.retries,
  retriedAt: iso(r.retried_at),
  resolvedAt: iso(r.resolved_at),
});

async function select(db: Queryable, f: DeadLetterFilter, ids?: [string, number][]): Promise<Row[]> {
  const { rows } = await db.query<Row>(
    `SELECT tenant_id, device_id, seq, event_id, reason, envelope, created_at, retries, retried_at, resolved_at
     FROM sync_dead_letters
     WHERE ($1::text IS NULL OR tenant_id = $1) AND ($2::text IS NULL OR device_id = $2)
       AND ($3 OR resolved_at IS NULL)
       AND ($4::text[] IS NULL OR (device_id, seq) IN (SELECT * FROM unnest($4::text[], $5::bigint[])))
     ORDER BY tenant_id, device_id, seq`,
    [
      f.tenant ?? null,
      f.device ?? null,
      f.resolved === true,
      ids ? ids.map(([d]) => d) : null,
      ids ? ids.map(([, s]) => s) : null,
    ],
  );
  return rows;
}

/** The dead letters, oldest device first, in sequence order. */
export async function listDeadLetters(pool: Pool, filter: DeadLetterFilter = {}): Promise<DeadLetterView[]> {
  return (await select(pool, filter)).map(view);
}

/** `DEVICE:SEQ` into its parts; undefined for anything else. */
export function parseDeadLetterId(id: string): [string, number] | undefined {
  const m = /^([^:\s]{1,200}):([1-9][0-9]{0,15})$/.exec(id);
  return m ? [m[1]!, Number(m[2])] : undefined;
}

/**
 * Replays the dead letters `ids` names (`DEVICE:SEQ`, of `tenant` when given: another's is unknown), or every waiting one the filter selects, each in its own
 * transaction: one that breaks a rule still stays a dead letter, with its new reason, and the others go on.
 * Idempotent: a replayed one is not projected again, and a projection applied twice changes nothing more.
 */
export async function retryDeadLetters(
  pool: Pool,
  select_: { ids: [string, number][]; tenant?: string } | { filter: DeadLetterFilter },
): Promise<ReplayOutcome[]> {
  const chosen =
    'ids' in select_
      ? await select(pool, { tenant: select_.tenant, resolved: true }, select_.ids)
      : await select(pool, { ...select_.filter, resolved: false });
  const outcomes: ReplayOutcome[] = [];
  if ('ids' in select_) {
    const found = new Set(chosen.map((r) => deadLetterId(r.device_id, r.seq)));
    for (const [device, seq] of select_.ids)
      if (!found.has(deadLetterId(device, seq))) outcomes.push({ id: deadLetterId(device, seq), outcome: 'unknown' });
  }
  for (const r of chosen) outcomes.push(await inTransaction(pool, (client) => replayOne(client, r)));
  return outcomes;
}

async function replayOne(client: Client, chosen: Row): Promise<ReplayOutcome> {
  const id = deadLetterId(chosen.device_id, chosen.seq);
  // The device's head lock first, as a batch takes it: a replay and a batch of the same device never interleave.
  const device = await createDeviceRepo(client).deviceForUpdate(chosen.tenant_id, chosen.device_id);
  const { rows } = await client.query<Row>(
    `SELECT tenant_id, device_id, seq, event_id, reason, envelope, created_at, retries, retried_at, resolved_at
     FROM sync_dead_letters WHERE tenant_id = $1 AND device_id = $2 AND seq = $3 FOR UPDATE`,
    [chosen.tenant_id, chosen.device_id, chosen.seq],
  );
  const r = rows[0];
  if (!r) return { id, outcome: 'unknown' };
  if (r.resolved_at !== null) return { id, outcome: 'alreadyReplayed' };
  // Its time moves as the ingest's would: the device's offset now, the receive time of the event.
  const clock = { offsetMs: device?.clockOffsetMs ?? null, receivedMs: r.created_at.getTime() };
  await client.query('SAVEPOINT replay');
  try {
    await projectEvent(
      client,
      { tenantId: r.tenant_id, deviceId: r.device_id, seq: r.seq, clock },
      parseEvent(r.envelope, r.tenant_id),
    );
    await client.query('RELEASE SAVEPOINT replay');
  } catch (err) {
    if (!isEventFault(err)) throw err;
    await client.query('ROLLBACK TO SAVEPOINT replay');
    const reason = err instanceof RuleBroken ? err.message : `projection failed: ${(err as Error).message}`;
    await client.query(
      `UPDATE sync_dead_letters SET retries = retries + 1, retried_at = now(), reason = $4
       WHERE tenant_id = $1 AND device_id = $2 AND seq = $3`,
      [r.tenant_id, r.device_id, r.seq, textSafe(reason.slice(0, 500))],
    );
    return { id, outcome: 'failed', reason };
  }
  await client.query(
    `UPDATE sync_dead_letters SET retries = retries + 1, retried_at = now(), resolved_at = now()
     WHERE tenant_id = $1 AND device_id = $2 AND seq = $3`,
    [r.tenant_id, r.device_id, r.seq],
  );
  return { id, outcome: 'replayed' };
}
