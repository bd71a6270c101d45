import {
  type CommandErrorCode,
  commandProblem,
  CommandRejected,
  type ErrorDetail,
  reject,
} from '../../shared/errors.js';
import { formatMoney } from '../../shared/money.js';

/**
 * Size limits of orders (config `ordering.*`). Without them one anonymous token could grow an order without
 * end: every command writes the whole order again (socket events, sync outbox), so a 20,000-line order cost
 * megabytes per command and filled the disk.
 */
export interface OrderBounds {
  /** Lines that are not CANCELLED, across all buckets of an order. */
  maxLines: number;
  /** Open orders listing one non-staff user. */
  maxOpenPerAnonymousUser: number;
}

export const DEFAULT_ORDER_BOUNDS: OrderBounds = { maxLines: 400, maxOpenPerAnonymousUser: 20 };

/**
 * The value of an order's live lines (total + editTotal) stays at most 10^9 minor units (10,000,000.00): far
 * beyond any real order, and far below 2^53, so every sum of prices stays an exact integer and formats.
 */
export const MAX_ORDER_VALUE_MINOR = 1_000_000_000;

interface SizedLine {
  quantity: number;
  price_minor: number;
  status: string;
}

/**
 * Refuses an order that would, after the command, hold more than `maxLines` live lines or be worth more than
 * MAX_ORDER_VALUE_MINOR; both problems are reported together. `lines` are the order's lines as the command
 * would leave them. Called before anything is written, so a refused command changes nothing.
 */
export function checkOrderSize(orderId: string, lines: SizedLine[], bounds: OrderBounds): void {
  const live = lines.filter((l) => l.status !== 'CANCELLED');
  const value = live.reduce((sum, l) => sum + l.price_minor * l.quantity, 0);
  const problems: ErrorDetail<CommandErrorCode>[] = [];
  if (live.length > bounds.maxLines) {
    problems.push(
      commandProblem(
        'tooManyLines',
        `an order may hold at most ${bounds.maxLines} lines; this command would make it ${live.length}`,
        [orderId, String(bounds.maxLines)],
      ),
    );
  }
  if (value > MAX_ORDER_VALUE_MINOR) {
    const limit = formatMoney(MAX_ORDER_VALUE_MINOR);
    problems.push(commandProblem('orderValueTooHigh', `an order may be worth at most ${limit}`, [orderId, limit]));
  }
  if (problems.length > 0) throw new CommandRejected(problems);
}

/** `new` by a non-staff user who already has `maxOpenPerAnonymousUser` open orders. */
export function checkOpenOrders(openOrders: number, bounds: OrderBounds): void {
  if (openOrders >= bounds.maxOpenPerAnonymousUser) {
    const limit = String(bounds.maxOpenPerAnonymousUser);
    throw reject('tooManyOpenOrders', `a customer may have at most ${limit} open orders`, [limit]);
  }
}
