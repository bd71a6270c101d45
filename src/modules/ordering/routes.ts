import { json, type Route } from '../../http/types.js';
import { isUuid } from '../../shared/ids.js';
import { notFound } from '../../shared/errors.js';
import { compile, type Validator } from '../../shared/validate.js';
import { COMMAND_NAMES, type CommandName, commandPath, ORDER_COMMANDS } from './commands/registry.js';
import { idempotencyOf } from './idempotency.js';
import type { CommandBody, OrderingService } from './service.js';
import { parseOrderQuery } from './staff-views.js';

/** An order id in a path must be a UUID; anything else names no order. */
const orderIdOf = (id: string | undefined): string => {
  if (!id || !isUuid(id)) throw notFound('order');
  return id;
};

/**
 * An order command's route, from the registry (src/modules/ordering/commands/registry.ts): its Idempotency-Key is
 * checked first (the fingerprint is taken from the body as parsed, before validation), then the order id of the
 * path (404), then the body; the service queues it and answers its confirmation.
 */
function commandRoute<N extends CommandName>(ordering: OrderingService, name: N): Route {
  const command = ORDER_COMMANDS[name];
  const validate = compile(command.body) as Validator<(typeof ORDER_COMMANDS)[N]['body']>;
  const onOrder = command.lifecycle !== 'creates';
  return {
    method: 'post', path: commandPath(name), auth: 'bearer', body: command.bodyRequired ? 'json' : 'optional-json',
    handle: async ({ req, principal, body }) => {
      const idem = idempotencyOf(req.headers, req.path, body);
      const orderId = onOrder ? orderIdOf(req.params.id) : undefined;
      const valid = validate(body ?? {}) as CommandBody<N>;
      return json(200, await ordering.command(name, principal, orderId, valid, idem));
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
      handle: ({ req, principal }) => json(200, ordering.getOrder(principal, orderIdOf(req.params.id))),
    },
    {
      method: 'get',
      path: '/ordering-api/api/orders',
      auth: 'write',
      body: 'none',
      handle: ({ req, principal }) => json(200, ordering.listOrders(principal, parseOrderQuery(req.query))),
    },
  ];
}
