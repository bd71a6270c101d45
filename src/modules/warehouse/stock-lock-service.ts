import { AppError, type ErrorCode, type ErrorDetail, isNonEmpty, notFound, problem } from '../../shared/errors.js';
import { isoOf } from '../../shared/clock.js';
import { fromMicro } from '../../shared/qty.js';
import { allocateItems, allocatePackets } from './stock-lock-allocation.js';
import type { ItemState, WarehouseRepo } from './repo.js';
import type { Actor, LockLine, PacketInput } from './schemas.js';

export interface LockDeps {
  repo: WarehouseRepo;
  now(): number;
  lockTtlMs: number;
}

export interface ItemLockResult {
  warehouse: string;
  expires: string;
  items: { id: string; unit: string; requested: number; locked: number }[];
}

export interface PacketLockResult {
  warehouse: string;
  expires: string;
  packets: Record<string, { requested: number; locked: number }>;
}

export interface ReleaseResult {
  warehouse: string;
  items: { id: string; unit: string | null; released: number }[];
}

/** packets x qty may pass 2^53 (it is only reported then, never stored). */
const display = (micro: number): number => (Number.isSafeInteger(micro) ? fromMicro(micro) : micro / 1e6);

/** The state of each named item; a line whose unit differs from the kept unit is a 409 unitMismatch. */
function readItems(repo: WarehouseRepo, actor: Actor, warehouseId: string, lines: LockLine[], now: number) {
  if (!repo.warehouse(actor.tenantId, warehouseId)) throw notFound('warehouse');
  const states = new Map<string, ItemState>();
  const mismatches: ErrorDetail<ErrorCode>[] = [];
  const reported = new Set<string>();
  for (const line of lines) {
    let s = states.get(line.id);
    if (!s) {
      s = repo.itemState(actor.tenantId, warehouseId, line.id, actor.userId, now);
      states.set(line.id, s);
    }
    const key = `${line.id}\0${line.unit}`;
    if (s.unit !== null && s.unit !== line.unit && !reported.has(key)) {
      reported.add(key);
      mismatches.push(
        problem('unitMismatch', `item ${line.id} is kept in ${s.unit}, not ${line.unit}`, [line.id, s.unit, line.unit]),
      );
    }
  }
  if (isNonEmpty(mismatches))
    throw AppError.ofAll(`${mismatches.length} item unit(s) differ from the kept unit`, mismatches);
  // What is still free to lock: stock minus every user's live locks (the caller's own included, since
  // a new lock adds to the caller's lock).
  const free = new Map([...states].map(([id, s]) => [id, s.qtyMicro - s.lockedMicro]));
  return { states, free };
}

/** Adds what was granted to the caller's lock on each item and renews the caller's locks on every named item. */
function hold(
  deps: LockDeps,
  actor: Actor,
  warehouseId: string,
  states: Map<string, ItemState>,
  granted: Map<string, number>,
  expiresMs: number,
): void {
  for (const [id, s] of states) {
    const qty = s.ownMicro + (granted.get(id) ?? 0);
    if (qty > 0) deps.repo.setLock(actor.tenantId, warehouseId, id, actor.userId, qty, expiresMs);
  }
}

/** "Lock as much as possible": each item gets min(packets x item qty, available). */
export function lockItems(
  deps: LockDeps,
  actor: Actor,
  warehouseId: string,
  packets: number,
  lines: LockLine[],
): ItemLockResult {
  return deps.repo.transaction(() => {
    const now = deps.now();
    const { states, free } = readItems(deps.repo, actor, warehouseId, lines, now);
    const grants = allocateItems(packets, lines, free);
    const granted = new Map<string, number>();
    for (const g of grants) granted.set(g.id, (granted.get(g.id) ?? 0) + g.lockedMicro);
    const expiresMs = now + deps.lockTtlMs;
    hold(deps, actor, warehouseId, states, granted, expiresMs);
    return {
      warehouse: warehouseId,
      expires: isoOf(expiresMs),
      items: grants.map((g, i) => ({
        id: g.id,
        unit: lines[i]!.unit,
        requested: display(g.requestedMicro),
        locked: fromMicro(g.lockedMicro),
      })),
    };
  });
}

/** "Lock as many packets as possible": whole packets only, in body order. */
export function lockPackets(
  deps: LockDeps,
  actor: Actor,
  warehouseId: string,
  packets: PacketInput[],
): PacketLockResult {
  return deps.repo.transaction(() => {
    const now = deps.now();
    const { states, free } = readItems(
      deps.repo,
      actor,
      warehouseId,
      packets.flatMap((p) => p.items),
      now,
    );
    const grants = allocatePackets(
      packets.map((p) => ({
        name: p.name,
        qty: p.qty,
        items: p.items.map((i) => ({ id: i.id, qtyMicro: i.qtyMicro })),
      })),
      free,
    );
    const granted = new Map<string, number>();
    for (const g of grants) for (const [id, micro] of g.items) granted.set(id, (granted.get(id) ?? 0) + micro);
    const expiresMs = now + deps.lockTtlMs;
    hold(deps, actor, warehouseId, states, granted, expiresMs);
    // Defined, not assigned: `result['__proto__'] = ...` would set the prototype and drop the packet from the reply.
    const result: PacketLockResult['packets'] = Object.fromEntries(
      grants.map((g) => [g.name, { requested: g.requested, locked: g.locked }]),
    );
    return { warehouse: warehouseId, expires: isoOf(expiresMs), packets: result };
  });
}

/**
 * Removes the caller's locks on the items (all its locks in the warehouse when `itemIds` is undefined) and
 * reports what was still held. Runs inside the caller's transaction (a release call, or unlockItems).
 */
export function releaseLocks(
  repo: WarehouseRepo,
  actor: Actor,
  warehouseId: string,
  itemIds: string[] | undefined,
  now: number,
): ReleaseResult['items'] {
  const t = actor.tenantId;
  const ids = itemIds ? [...new Set(itemIds)] : repo.userLockedItems(t, warehouseId, actor.userId);
  const released: ReleaseResult['items'] = [];
  for (const id of ids) {
    const lock = repo.lock(t, warehouseId, id, actor.userId);
    if (!lock) continue;
    repo.setLock(t, warehouseId, id, actor.userId, 0, 0);
    if (lock.expiresMs <= now) continue; // an expired lock held nothing
    const { unit } = repo.itemState(t, warehouseId, id, actor.userId, now);
    released.push({ id, unit, released: fromMicro(lock.qtyMicro) });
  }
  return released;
}

export function releaseCall(
  deps: LockDeps,
  actor: Actor,
  warehouseId: string,
  itemIds: string[] | undefined,
): ReleaseResult {
  return deps.repo.transaction(() => {
    if (!deps.repo.warehouse(actor.tenantId, warehouseId)) throw notFound('warehouse');
    return { warehouse: warehouseId, items: releaseLocks(deps.repo, actor, warehouseId, itemIds, deps.now()) };
  });
}
