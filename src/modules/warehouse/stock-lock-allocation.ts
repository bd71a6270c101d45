/**
 * Lock allocation, pure: given what is still free of each item (qty minus every live lock, in micro-units),
 * decide how much each request gets. The service reads `free` and writes the result in one transaction.
 */

export interface ItemRequest {
  id: string;
  /** Quantity of the item in one packet, in micro-units (> 0). */
  qtyMicro: number;
}

export interface ItemGrant {
  id: string;
  /** packets x qtyMicro; may exceed Number.MAX_SAFE_INTEGER for absurd requests, so only for display. */
  requestedMicro: number;
  lockedMicro: number;
}

/**
 * "Lock as much as possible": each line gets min(packets x qty, free). Lines naming the same item share it,
 * in body order. `free` is consumed.
 */
export function allocateItems(packets: number, lines: ItemRequest[], free: Map<string, number>): ItemGrant[] {
  return lines.map((line) => {
    const available = free.get(line.id) ?? 0;
    // packets x qty can pass 2^53; when it does it is far above any available quantity, so the float
    // comparison still picks the right side, and a product <= available is an exact integer.
    const requestedMicro = packets * line.qtyMicro;
    const lockedMicro = Math.min(requestedMicro, available);
    free.set(line.id, available - lockedMicro);
    return { id: line.id, requestedMicro, lockedMicro };
  });
}

export interface PacketRequest {
  name: string;
  qty: number;
  items: ItemRequest[];
}

export interface PacketGrant {
  name: string;
  requested: number;
  locked: number;
  /** Micro-units locked per item for this packet: locked x the packet's need of the item. */
  items: Map<string, number>;
}

/** What one packet needs of each item (lines naming the same item add up). */
export function packetNeeds(items: ItemRequest[]): Map<string, number> {
  const need = new Map<string, number>();
  for (const it of items) need.set(it.id, (need.get(it.id) ?? 0) + it.qtyMicro);
  return need;
}

/**
 * "Lock as many packets as possible": packets in body order, each gets the largest whole k <= its qty for
 * which every item of the packet is free k times. A packet without items gets its qty (nothing to lock).
 */
export function allocatePackets(packets: PacketRequest[], free: Map<string, number>): PacketGrant[] {
  return packets.map((p) => {
    const need = packetNeeds(p.items);
    let k = p.qty;
    for (const [id, micro] of need) k = Math.min(k, Math.floor((free.get(id) ?? 0) / micro));
    const items = new Map<string, number>();
    for (const [id, micro] of need) {
      const take = k * micro; // <= free, so an exact integer
      free.set(id, (free.get(id) ?? 0) - take);
      items.set(id, take);
    }
    return { name: p.name, requested: p.qty, locked: k, items };
  });
}

export interface HeldLock {
  userId: string;
  qtyMicro: number;
  expiresMs: number;
}

/**
 * When stock falls below the sum of live locks (an issue that ate into the caller's own lock, a stocktake
 * that counted less), locks shrink until they fit: the caller's own first, then the most recently renewed.
 * Returns the locks whose quantity changes, with their new quantity (0 = remove).
 */
export function trimLocks(locks: HeldLock[], qtyMicro: number, callerId: string): HeldLock[] {
  let excess = locks.reduce((sum, l) => sum + l.qtyMicro, 0) - qtyMicro;
  if (excess <= 0) return [];
  const order = [...locks].sort(
    (a, b) =>
      Number(b.userId === callerId) - Number(a.userId === callerId) ||
      b.expiresMs - a.expiresMs ||
      a.userId.localeCompare(b.userId),
  );
  const changed: HeldLock[] = [];
  for (const lock of order) {
    if (excess <= 0) break;
    const cut = Math.min(lock.qtyMicro, excess);
    excess -= cut;
    changed.push({ ...lock, qtyMicro: lock.qtyMicro - cut });
  }
  return changed;
}
