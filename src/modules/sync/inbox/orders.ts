import type { CommandErrorCode, ErrorDetail } from '../../../shared/errors.js';
import type { InboxResultBody } from '../../../shared/sync-messages.js';
import type { CommandHandler } from '../../ordering/command-queue.js';
import { centralUserId } from './apply.js';

/**
 * The ordering queue's handler, telling the central what became of each order it created (docs/sync.md "Orders
 * created at the central"): when the `new` of a central order is applied (priced by this box's menu, the order
 * pushed to the venue's staff sockets) or refused with the codes any client would get (venueClosed,
 * productUnavailable, ...), an `inbox.result` event goes up in the same transaction. Every other command is
 * the handler's alone.
 */
export function reportCentralOrders(
  handler: CommandHandler,
  report: (tenantId: string, body: InboxResultBody, nowMs: number) => void,
): CommandHandler {
  const isCentralNew = (cmd: {
    tenantId: string;
    userId: string;
    kind: string;
    correlationId: string;
    orderId: string;
  }) => cmd.kind === 'new' && cmd.correlationId === cmd.orderId && cmd.userId === centralUserId(cmd.tenantId);
  return {
    process(cmd, now) {
      const frames = handler.process(cmd, now);
      if (isCentralNew(cmd))
        report(cmd.tenantId, { entry: cmd.orderId, kind: 'order', status: 'applied', codes: [] }, now);
      return frames;
    },
    notify(cmd, codes: ErrorDetail<CommandErrorCode>[], now) {
      const frames = handler.notify(cmd, codes, now);
      if (isCentralNew(cmd))
        report(cmd.tenantId, { entry: cmd.orderId, kind: 'order', status: 'rejected', codes }, now);
      return frames;
    },
  };
}
