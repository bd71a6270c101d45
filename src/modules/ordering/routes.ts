import { json, type Route } from '../../http/types.js';
import { isUuid } from '../../shared/ids.js';
import { notFound } from '../../shared/errors.js';
import { compile } from '../../shared/validate.js';
import { AppendBody, NewOrderBody } from './schemas.js';
import type { OrderingService } from './service.js';

const validateNew = compile(NewOrderBody);
const validateAppend = compile(AppendBody);

/** An order id in a path must be a UUID; anything else names no order. */
const orderIdOf = (id: string | undefined): string => {
  if (!id || !isUuid(id)) throw notFound('order');
  return id;
};

export function orderingRoutes(ordering: OrderingService): Route[] {
  return [
    {
      method: 'post',
      path: '/ordering-api/api/order/new',
      auth: 'bearer',
      body: 'json',
      handle: async ({ principal, body }) => json(200, await ordering.newOrder(principal, validateNew(body))),
    },
    {
      method: 'post',
      path: '/ordering-api/api/order/:id/append',
      auth: 'bearer',
      body: 'json',
      handle: async ({ req, principal, body }) =>
        json(200, await ordering.append(principal, orderIdOf(req.params.id), validateAppend(body))),
    },
    {
      method: 'get',
      path: '/ordering-api/api/order/:id',
      auth: 'bearer',
      body: 'none',
      handle: ({ req, principal }) => json(200, ordering.getOrder(principal, orderIdOf(req.params.id))),
    },
  ];
}
