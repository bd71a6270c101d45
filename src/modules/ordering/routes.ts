import { Type } from '@sinclair/typebox';
import { LimitParam, ListOf } from '../../http/contracts/query.js';
import { json, type Route, route } from '../../http/types.js';
import { Order } from '../../shared/order-schemas.js';
import { isUuid } from '../../shared/ids.js';
import { AppError, notFound } from '../../shared/errors.js';
import { COMMAND_NAMES, type CommandName, commandPath, ORDER_COMMANDS } from './commands/registry.js';
import { idempotencyOf } from './idempotency.js';
import type { CommandBody, OrderingService } from './service.js';
import { ORDER_STATUSES } from './schemas.js';
import { DEFAULT_PAGE, MAX_PAGE, orderFilterOf } from './staff-views.js';
import { UUID_PATTERN } from '../../shared/types.js';

/** An order id in a path must be a UUID; anything else names no order. */
const orderIdOf = (id: string | undefined): string => {
  if (!id || !isUuid(id)) throw notFound('order');
  return id;
};

/** The 200 of every order command (docs/api.md "Order commands"): the command is durable. */
const ConfirmationSchema = Type.Object(
  {
    correlationId: Type.String({ description: 'the NOTIFICATION of a refused command carries it' }),
    orderId: Type.String(),
    lines: Type.Array(Type.String(), {
      description: 'the new line ids (new, append), the named ones (update, remove), else none',
    }),
  },
  { additionalProperties: false },
);

const OrderPageSchema = Type.Object(
  {
    items: Type.Array(Order),
    next: Type.Union([Type.String(), Type.Null()], { description: 'the cursor of the next page; null on the last' }),
  },
  { additionalProperties: false },
);

/** `GET /ordering-api/api/orders`'s filters (docs/api.md "The API"): the schema is their check. */
export const OrderListQuery = Type.Object({
  venue: Type.Optional(
    Type.String({ pattern: UUID_PATTERN, description: 'orders with a bucket at this venue (UUID)' }),
  ),
  status: Type.Optional(ListOf(ORDER_STATUSES, 'one or more statuses, separated by commas (ORDERED,READY)')),
  since: Type.Optional(
    Type.String({
      // Every value the pattern takes is a time Date.parse reads (it is lenient with days: 02-30 is 03-02).
      pattern:
        '^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])T([01]\\d|2[0-3]):[0-5]\\d(:[0-5]\\d(\\.\\d{1,9})?)?' +
        '(Z|[+-]([01]\\d|2[0-3]):[0-5]\\d)?$',
      description: 'an ISO 8601 timestamp (2026-11-27T10:00:00Z): orders whose lastChanged is at or after it',
    }),
  ),
  limit: LimitParam(DEFAULT_PAGE, MAX_PAGE),
  cursor: Type.Optional(Type.String({ minLength: 1, description: "the previous page's `next`" })),
});

/** Each command's operation in /openapi.json, the method name of a generated client. */
const OPERATION_IDS: Record<CommandName, string> = {
  new: 'createOrder',
  append: 'appendToOrder',
  update: 'updateOrderLines',
  remove: 'removeOrderLines',
  submit: 'submitOrder',
  ready: 'markOrderReady',
  complete: 'completeOrder',
  cancel: 'cancelOrder',
};

const IDEMPOTENCY_KEY = {
  name: 'Idempotency-Key',
  required: false,
  description:
    'a new random key per command, the same on a retry: the first 200 again, applied once (docs/api.md "Safe retries")',
};

/** The longest a refused command's 429 is held back (docs/orders.md "Order limits"). */
export const HOLD_BACK_MS = 1000;

/**
 * A 429 is answered after its Retry-After (HOLD_BACK_MS at most): a client that waits for Retry-After loses
 * nothing, and one that does not (60 tokens of one address, each asking again at once) gets an answer a second
 * instead of thousands, which took the event loop from every other client (docs/performance.md "Many anonymous
 * customers from one address"). A held answer costs a timer, no work.
 */
async function heldBack(err: unknown): Promise<void> {
  if (!(err instanceof AppError) || err.status !== 429) return;
  const seconds = Number(err.headers['Retry-After'] ?? 1);
  await new Promise((resolve) => setTimeout(resolve, Math.min(HOLD_BACK_MS, seconds * 1000)));
}

/**
 * An order command's route, from the registry (src/modules/ordering/commands/registry.ts): its Idempotency-Key is
 * checked first (the fingerprint is taken from the body as parsed, before validation), then the order id of the
 * path (404), then the body; the service queues it and answers its confirmation.
 */
function commandRoute<N extends CommandName>(ordering: OrderingService, name: N): Route {
  const command = ORDER_COMMANDS[name];
  const onOrder = command.lifecycle !== 'creates';
  return {
    method: 'post',
    path: commandPath(name),
    auth: 'bearer',
    body: command.bodyRequired ? 'json' : 'optional-json',
    schema: { body: command.body },
    doc: {
      operationId: OPERATION_IDS[name],
      summary: command.summary,
      description: onOrder
        ? 'Queued; the result comes on the socket as ORDER_CHANGE, or as a NOTIFICATION with the business codes.'
        : 'Queued; the order comes on the socket as ORDER_CHANGE, or a NOTIFICATION with the business codes.',
      ...(onOrder ? { params: { id: 'the order id' } } : {}),
      headers: [IDEMPOTENCY_KEY],
      responses: {
        200: { description: 'confirmed: durable, to be applied in order', schema: ConfirmationSchema },
        429: {
          description: "tooManyRequests: past the customer's command rate or its address's or venue's write budget",
          headers: ['Retry-After'],
        },
      },
    },
    handle: async ({ req, principal, body, valid }) => {
      const idem = idempotencyOf(req.headers, req.path, body);
      const orderId = onOrder ? orderIdOf(req.params.id) : undefined;
      // Only a command whose body is optional takes a missing one as {}: a JSON null is no object elsewhere.
      const checked = valid(command.bodyRequired ? body : (body ?? {})) as CommandBody<N>;
      try {
        return json(200, await ordering.command(name, principal, orderId, checked, idem, req.remoteAddress));
      } catch (err) {
        await heldBack(err);
        throw err;
      }
    },
  };
}

export function orderingRoutes(ordering: OrderingService): Route[] {
  return [
    ...COMMAND_NAMES.map((name) => commandRoute(ordering, name)),
    {
      method: 'get',
      path: '/ordering-api/api/order/:id',
      auth: 'bearer',
      body: 'none',
      doc: {
        operationId: 'getOrder',
        summary: 'The order, to the users it lists and to staff',
        params: { id: 'the order id' },
        responses: { 200: { description: 'the Order', schema: Order } },
      },
      handle: ({ req, principal }) => json(200, ordering.getOrder(principal, orderIdOf(req.params.id))),
    },
    route({
      method: 'get',
      path: '/ordering-api/api/orders',
      auth: 'write',
      body: 'none',
      schema: { query: OrderListQuery },
      doc: {
        operationId: 'listOrders',
        summary: 'Every order of the tenant, newest first (staff)',
        responses: { 200: { description: 'a page of Orders', schema: OrderPageSchema } },
      },
      handle: ({ query, principal }) => json(200, ordering.listOrders(principal, orderFilterOf(query))),
    }),
  ];
}
