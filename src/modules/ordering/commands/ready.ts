import { EmptyBody } from '../schemas.js';
import { defineCommand } from './define.js';
import { type Lifecycle, orderFor } from './rules.js';

const lifecycle: Lifecycle = { allowedIn: ['ORDERED'], staffOnly: true };

/** `ready` (staff): the kitchen is done with what was ordered; the customer's socket hears it. */
export const readyCommand = defineCommand({
  summary: 'Mark the order ready for pick-up (staff)',
  lifecycle,
  body: EmptyBody,
  bodyRequired: false,
  confirm: () => ({ stored: {}, lines: [] }),
  apply(deps, cmd, _body: Record<string, never>, now) {
    const order = orderFor(deps, cmd, lifecycle);
    deps.repo.setStatus(cmd.tenantId, cmd.orderId, 'READY', order.rounds, now);
  },
});
