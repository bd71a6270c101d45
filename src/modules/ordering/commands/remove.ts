import { RemoveBody } from '../schemas.js';
import { defineCommand, LINE_ONCE, rejectDuplicates } from './define.js';
import { editableLines, type Lifecycle, orderFor, recomputeTotals, requireBucket } from './rules.js';

export interface StoredRemove {
  venue: string;
  lines: string[];
}

const lifecycle: Lifecycle = { allowedIn: ['NEW'], tabAlsoIn: ['ORDERED', 'READY'] };

/** `remove`: NEW lines leave the order. They were never ordered, so they are deleted, not CANCELLED. */
export const removeCommand = defineCommand({
  summary: 'Remove NEW lines from the order',
  lifecycle,
  body: RemoveBody,
  bodyRequired: true,
  confirm(body) {
    rejectDuplicates(body.lines, (i) => `/lines/${i}`, LINE_ONCE);
    return { stored: { venue: body.venue, lines: body.lines } satisfies StoredRemove, lines: body.lines };
  },
  apply(deps, cmd, body: StoredRemove, now) {
    orderFor(deps, cmd, lifecycle);
    requireBucket(deps.repo, cmd, body.venue);
    for (const l of editableLines(deps, cmd, body.venue, body.lines))
      deps.repo.deleteLine(cmd.tenantId, cmd.orderId, l.id);
    recomputeTotals(deps.repo, cmd.tenantId, cmd.orderId, now);
  },
});
