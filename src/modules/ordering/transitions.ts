import type { OrderStatus, OrderType } from './schemas.js';

/** The order commands, as they appear in paths and in the command log. */
export type CommandName = 'new' | 'append' | 'update' | 'remove' | 'submit' | 'ready' | 'complete' | 'cancel';

/** Commands only staff may give; from anyone else they are `forbidden`. (`cancel` is staff-only once the kitchen has lines.) */
export const STAFF_ONLY: ReadonlySet<CommandName> = new Set(['ready', 'complete']);

/** Closed orders take no command at all (`orderClosed`). */
export const isClosedStatus = (status: string): boolean => status === 'COMPLETED' || status === 'CANCELLED';

/**
 * The lifecycle table (README "The order lifecycle"): the statuses an open order may be in for each command. A DINE_IN_OPEN
 * order is a tab: after a submit it keeps taking rounds (edit, then submit again), also once READY.
 */
const ALLOWED: Record<Exclude<CommandName, 'new'>, readonly OrderStatus[]> = {
  append: ['NEW'],
  update: ['NEW'],
  remove: ['NEW'],
  submit: ['NEW', 'ORDERED'],
  ready: ['ORDERED'],
  complete: ['ORDERED', 'READY'],
  cancel: ['NEW', 'ORDERED', 'READY'],
};
const TAB_EXTRA: Partial<Record<CommandName, readonly OrderStatus[]>> = {
  append: ['ORDERED', 'READY'],
  update: ['ORDERED', 'READY'],
  remove: ['ORDERED', 'READY'],
  submit: ['READY'],
};

export function allowedIn(command: Exclude<CommandName, 'new'>, status: string, type: OrderType): boolean {
  const s = status as OrderStatus;
  return ALLOWED[command].includes(s) || (type === 'DINE_IN_OPEN' && (TAB_EXTRA[command]?.includes(s) ?? false));
}
