import { reject } from '../../../shared/errors.js';
import { CompleteBody } from '../schemas.js';
import { defineCommand } from './define.js';
import { type Lifecycle, orderFor, recomputeTotals } from './rules.js';

export interface StoredComplete {
  claimCode: string;
}

const lifecycle: Lifecycle = { allowedIn: ['ORDERED', 'READY'], staffOnly: true };

/**
 * `complete` (staff): handed over against the claim code. A tab's round that was never submitted is not
 * part of what was handed over or paid, so its NEW lines become CANCELLED.
 */
export const completeCommand = defineCommand({
  summary: 'Hand the order over against its claim code (staff)',
  lifecycle,
  body: CompleteBody,
  bodyRequired: true,
  confirm: (body) => ({ stored: { claimCode: body.claimCode } satisfies StoredComplete, lines: [] }),
  apply(deps, cmd, body: StoredComplete, now) {
    const order = orderFor(deps, cmd, lifecycle);
    if (body.claimCode !== order.claim_code) {
      throw reject('invalidClaimCode', 'the claim code does not match this order', [cmd.orderId]);
    }
    deps.repo.cancelLines(cmd.tenantId, cmd.orderId, now, true);
    deps.repo.closeOrder(cmd.tenantId, cmd.orderId, 'COMPLETED', true, now);
    recomputeTotals(deps.repo, cmd.tenantId, cmd.orderId, now);
  },
});
