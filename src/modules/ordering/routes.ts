import { json, type Route, type RouteContext } from '../../http/types.js';
import { isUuid } from '../../shared/ids.js';
import { notFound } from '../../shared/errors.js';
import { compile } from '../../shared/validate.js';
import { idempotencyOf, type IdempotencyRequest } from './idempotency.js';
import { AppendBody, CancelBody, CompleteBody, EmptyBody, NewOrderBody, RemoveBody, UpdateBody } from './schemas.js';
import type { Confirmation, OrderingService } from './service.js';
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

type Run = (ctx: RouteContext, idem: IdempotencyRequest | undefined) => Promise<Confirmation>;

export function orderingRoutes(ordering: OrderingService): Route[] {
  /**
   * An order command: its Idempotency-Key is checked first (the fingerprint is taken from the body as parsed,
   * before validation), then the body; the service queues it and answers its confirmation.
   */
  const command = (path: string, body: Route['body'], run: Run): Route => ({
    method: 'post', path, auth: 'bearer', body,
    handle: async (ctx) => json(200, await run(ctx, idempotencyOf(ctx.req.headers, ctx.req.path, ctx.body))),
  });
  const onOrder = (name: string, body: Route['body'], run: Run): Route =>
    command(`/ordering-api/api/order/:id/${name}`, body, run);
  return [
    command('/ordering-api/api/order/new', 'json', ({ principal, body }, idem) =>
      ordering.newOrder(principal, validateNew(body), idem)),
    onOrder('append', 'json', ({ req, principal, body }, idem) =>
      ordering.append(principal, orderIdOf(req.params.id), validateAppend(body), idem)),
    onOrder('update', 'json', ({ req, principal, body }, idem) =>
      ordering.update(principal, orderIdOf(req.params.id), validateUpdate(body), idem)),
    onOrder('remove', 'json', ({ req, principal, body }, idem) =>
      ordering.remove(principal, orderIdOf(req.params.id), validateRemove(body), idem)),
    onOrder('submit', 'optional-json', ({ req, principal, body }, idem) => {
      const id = orderIdOf(req.params.id);
      validateEmpty(body ?? {});
      return ordering.submit(principal, id, idem);
    }),
    onOrder('ready', 'optional-json', ({ req, principal, body }, idem) => {
      const id = orderIdOf(req.params.id);
      validateEmpty(body ?? {});
      return ordering.ready(principal, id, idem);
    }),
    onOrder('complete', 'json', ({ req, principal, body }, idem) =>
      ordering.complete(principal, orderIdOf(req.params.id), validateComplete(body), idem)),
    onOrder('cancel', 'optional-json', ({ req, principal, body }, idem) =>
      ordering.cancel(principal, orderIdOf(req.params.id), validateCancel(body ?? {}), idem)),
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
