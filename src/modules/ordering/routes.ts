import { json, type Route } from '../../http/types.js';
import { isUuid } from '../../shared/ids.js';
import { notFound } from '../../shared/errors.js';
import { compile } from '../../shared/validate.js';
import { AppendBody, CancelBody, CompleteBody, EmptyBody, NewOrderBody, RemoveBody, UpdateBody } from './schemas.js';
import type { OrderingService } from './service.js';
import { parseOrderQuery } from './staff-views.js';

const validateNew = compile(NewOrderBody);
const validateAppend = compile(AppendBody);
const validateUpdate = compile(UpdateBody);
const validateRemove = compile(RemoveBody);
const validateEmpty = compile(EmptyBody);
const validateComplete = compile(CompleteBody);
const validateCancel = compile(CancelBody);

/** An order id in a path must be a UUID; anything else names no order. */
const orderIdOf = (id: string | undefined): string => {
  if (!id || !isUuid(id)) throw notFound('order');
  return id;
};

export function orderingRoutes(ordering: OrderingService): Route[] {
  /** An order command on `order/{id}/<name>`: validated here, queued and confirmed by the service. */
  const command = (name: string, body: Route['body'], run: Route['handle']): Route => ({
    method: 'post', path: `/ordering-api/api/order/:id/${name}`, auth: 'bearer', body, handle: run,
  });
  return [
    {
      method: 'post',
      path: '/ordering-api/api/order/new',
      auth: 'bearer',
      body: 'json',
      handle: async ({ principal, body }) => json(200, await ordering.newOrder(principal, validateNew(body))),
    },
    command('append', 'json', async ({ req, principal, body }) =>
      json(200, await ordering.append(principal, orderIdOf(req.params.id), validateAppend(body)))),
    command('update', 'json', async ({ req, principal, body }) =>
      json(200, await ordering.update(principal, orderIdOf(req.params.id), validateUpdate(body)))),
    command('remove', 'json', async ({ req, principal, body }) =>
      json(200, await ordering.remove(principal, orderIdOf(req.params.id), validateRemove(body)))),
    command('submit', 'optional-json', async ({ req, principal, body }) => {
      const id = orderIdOf(req.params.id);
      validateEmpty(body ?? {});
      return json(200, await ordering.submit(principal, id));
    }),
    command('ready', 'optional-json', async ({ req, principal, body }) => {
      const id = orderIdOf(req.params.id);
      validateEmpty(body ?? {});
      return json(200, await ordering.ready(principal, id));
    }),
    command('complete', 'json', async ({ req, principal, body }) =>
      json(200, await ordering.complete(principal, orderIdOf(req.params.id), validateComplete(body)))),
    command('cancel', 'optional-json', async ({ req, principal, body }) =>
      json(200, await ordering.cancel(principal, orderIdOf(req.params.id), validateCancel(body ?? {})))),
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
