import type { TSchema } from '@sinclair/typebox';
import { appendCommand } from './append.js';
import { cancelCommand } from './cancel.js';
import { completeCommand } from './complete.js';
import type { OrderCommand } from './define.js';
import { newCommand } from './new.js';
import { readyCommand } from './ready.js';
import { removeCommand } from './remove.js';
import { submitCommand } from './submit.js';
import { updateCommand } from './update.js';

/**
 * Every order command, by the name it has in its path and in the command log (docs/orders.md "The order lifecycle").
 * Adding a command: its file beside this one, and its line here; the routes, the service, the queue's apply,
 * the metrics' labels and /openapi.json follow from this list.
 */
export const ORDER_COMMANDS = {
  new: newCommand,
  append: appendCommand,
  update: updateCommand,
  remove: removeCommand,
  submit: submitCommand,
  ready: readyCommand,
  complete: completeCommand,
  cancel: cancelCommand,
  // biome-ignore lint/suspicious/noExplicitAny: each command's body type differs; `unknown` would not accept their handlers.
} as const satisfies Record<string, OrderCommand<TSchema, any>>;

export type CommandName = keyof typeof ORDER_COMMANDS;
export const COMMAND_NAMES = Object.keys(ORDER_COMMANDS) as CommandName[];

/** The command of a stored kind, or undefined for a kind this box does not know (a downgraded box). */
export const commandOf = (kind: string): OrderCommand | undefined =>
  Object.hasOwn(ORDER_COMMANDS, kind) ? (ORDER_COMMANDS[kind as CommandName] as OrderCommand) : undefined;

/** A command's route path (docs/api.md "The API"): `new` alone creates an order, the others name one. */
export const commandPath = (name: CommandName): string =>
  ORDER_COMMANDS[name].lifecycle === 'creates'
    ? `/ordering-api/api/order/${name}`
    : `/ordering-api/api/order/:id/${name}`;
