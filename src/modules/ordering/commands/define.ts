import type { Static, TSchema } from '@sinclair/typebox';
import { invalidField } from '../../../shared/errors.js';
import { newId7 } from '../../../shared/ids.js';
import type { Command } from '../repo.js';
import type { LineInput } from '../schemas.js';
import type { CommandDeps, Lifecycle, StoredLine } from './rules.js';

/**
 * An order command, whole, in one file under this folder: its route, its body, the statuses it may be given in,
 * what it stores when confirmed and how it is applied. The registry (registry.ts) lists them; the routes, the
 * service, the queue's apply, the metrics and /openapi.json are all derived from it, so adding a command is
 * adding one file here and one line there (docs/api.md "Order commands"). What a command stores is its body as
 * validated, with ids handed out: the command log keeps that, and the queue applies it later, maybe after a
 * restart.
 */
export interface OrderCommand<Body extends TSchema = TSchema, Stored = unknown> {
  /** One line for /openapi.json. */
  summary: string;
  /**
   * Its path under /ordering-api/api/order: `new` alone creates an order; every other command acts on one
   * (`:id/<name>`), and has a row of the lifecycle table.
   */
  lifecycle: Lifecycle | 'creates';
  /** The request body's schema; `optional` commands also take no body at all (as `{}`). */
  body: Body;
  bodyRequired: boolean;
  /**
   * What the confirmed command stores, and the line ids its 200 names (new lines for `new` and `append`, the
   * named ones for `update` and `remove`). May refuse a body with a 400 (a line named twice); runs before the
   * command is queued.
   */
  confirm(body: Static<Body>): { stored: Stored; lines: string[] };
  /** Applies the stored command in the queue's savepoint; throws CommandRejected on a business rule. */
  apply(deps: CommandDeps, cmd: Command, stored: Stored, now: number): void;
}

/** Keeps each command's types together (its body's schema, what it stores) while the registry holds them all. */
export const defineCommand = <Body extends TSchema, Stored>(
  command: OrderCommand<Body, Stored>,
): OrderCommand<Body, Stored> => command;

/** New lines with the ids the confirmation hands out; the kitchen note kept only when there is one. */
export const withIds = (lines: LineInput[] = []): StoredLine[] =>
  lines.map((l) => ({
    id: newId7(),
    productId: l.productId,
    quantity: l.quantity,
    ...(l.extra?.note ? { note: l.extra.note } : {}),
  }));

export const LINE_ONCE = 'each line may be named only once';

/** A 400 naming the first repeat of a value (a venue, a line id) that a body may give only once. */
export function rejectDuplicates(values: string[], pointer: (i: number) => string, message: string): void {
  const dup = values.findIndex((v, i) => values.indexOf(v) !== i);
  if (dup >= 0) throw invalidField(pointer(dup), message);
}
