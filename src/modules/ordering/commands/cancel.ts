import { reject } from '../../../shared/errors.js';
import { CancelBody } from '../schemas.js';
import { defineCommand } from './define.js';
import { type Lifecycle, orderFor, recomputeTotals, ticketContext } from './rules.js';

export interface StoredCancel {
  reason?: string;
}

const lifecycle: Lifecycle = { allowedIn: ['NEW', 'ORDERED', 'READY'] };

/**
 * `cancel`: a user may cancel while the kitchen has nothing (no ORDERED line); staff always. Every line
 * becomes CANCELLED, the claim code is freed, and the kitchen gets a cancel slip for what it had.
 */
export const cancelCommand = defineCommand({
  summary: 'Cancel the order (staff once the kitchen has it)',
  lifecycle,
  body: CancelBody,
  bodyRequired: false,
  confirm: (body) => ({
    stored: (body.reason === undefined ? {} : { reason: body.reason }) satisfies StoredCancel,
    lines: [],
  }),
  apply(deps, cmd, body: StoredCancel, now) {
    orderFor(deps, cmd, lifecycle);
    const ordered = deps.repo.lines(cmd.tenantId, cmd.orderId).filter((l) => l.status === 'ORDERED');
    if (ordered.length > 0 && !cmd.staff) {
      throw reject('forbidden', 'the kitchen has this order: only staff may cancel it now', ['cancel']);
    }
    deps.repo.cancelLines(cmd.tenantId, cmd.orderId, now);
    deps.repo.closeOrder(cmd.tenantId, cmd.orderId, 'CANCELLED', false, now);
    recomputeTotals(deps.repo, cmd.tenantId, cmd.orderId, now);
    if (ordered.length > 0) deps.printJobs.cancelled(ticketContext(deps, cmd, now), ordered, body.reason);
  },
});
