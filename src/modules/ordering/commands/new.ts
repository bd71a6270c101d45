import { checkOpenOrders, checkOrderSize } from '../bounds.js';
import { pickClaimCode } from '../claim-code.js';
import { NewOrderBody, type OrderType } from '../schemas.js';
import { defineCommand, rejectDuplicates, withIds } from './define.js';
import { boundsOf, openVenue, priceLines, recomputeTotals, ROLES_OF_CREATOR, type StoredLine } from './rules.js';

export interface StoredNew {
  orderType: OrderType;
  buckets: { venue: string; lines: StoredLine[] }[];
  contact?: Record<string, string>;
  extra?: Record<string, string>;
}

/** `new`: an order with one bucket per venue; the 200 names the new order and every new line. */
export const newCommand = defineCommand({
  summary: 'Create an order (a basket, status NEW)',
  lifecycle: 'creates',
  body: NewOrderBody,
  bodyRequired: true,
  confirm(body) {
    rejectDuplicates(
      body.buckets.map((b) => b.venue),
      (i) => `/buckets/${i}/venue`,
      'each venue may have only one bucket',
    );
    const stored: StoredNew = {
      orderType: body.orderType,
      buckets: body.buckets.map((b) => ({ venue: b.venue, lines: withIds(b.lines) })),
      ...(body.contact ? { contact: body.contact as Record<string, string> } : {}),
      ...(body.extra ? { extra: body.extra } : {}),
    };
    return { stored, lines: stored.buckets.flatMap((b) => b.lines.map((l) => l.id)) };
  },
  /** Business rules of `new`: venues open, products on the menu; then the order, its lines and its creator. */
  apply(deps, cmd, body: StoredNew, now) {
    // Staff open orders for many guests; a customer's token is free, so its open orders are bounded.
    if (!cmd.staff) {
      const bounds = boundsOf(deps);
      checkOpenOrders(deps.repo.openOrdersOf(cmd.tenantId, cmd.userId, bounds.maxOpenPerAnonymousUser), bounds);
    }
    const venues = body.buckets.map((b) => openVenue(deps, cmd.tenantId, b.venue, body.orderType, now));
    const lines = body.buckets.flatMap((b, i) => priceLines(deps, cmd, venues[i]!, body.orderType, b.lines, now));
    checkOrderSize(cmd.orderId, lines, boundsOf(deps));
    const claimCode = pickClaimCode((code) => venues.some((v) => deps.repo.claimTaken(cmd.tenantId, v.id, code)));
    deps.repo.insertOrder({
      tenantId: cmd.tenantId,
      id: cmd.orderId,
      orderType: body.orderType,
      claimCode,
      source: body.extra?.['X-SOURCE'] ?? deps.source,
      contactJson: body.contact ? JSON.stringify(body.contact) : null,
      extraJson: body.extra ? JSON.stringify(body.extra) : null,
      nowMs: now,
    });
    for (const v of venues) deps.repo.insertBucket(cmd.tenantId, cmd.orderId, v.id);
    deps.repo.insertUser(cmd.tenantId, cmd.orderId, cmd.userId, ROLES_OF_CREATOR);
    for (const line of lines) deps.repo.insertLine(cmd.tenantId, cmd.orderId, line);
    recomputeTotals(deps.repo, cmd.tenantId, cmd.orderId, now);
  },
});
