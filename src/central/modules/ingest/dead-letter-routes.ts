import { Type } from '@sinclair/typebox';
import { OneOf } from '../../../http/contracts/query.js';
import { json, type Route, route } from '../../../http/types.js';
import { invalidField } from '../../../shared/errors.js';
import type { Pool } from '../../db/pool.js';
import { ok } from '../../contracts.js';
import { listDeadLetters, parseDeadLetterId, retryDeadLetters } from './dead-letters.js';

const OrNull = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);
const DateTime = Type.String({ format: 'date-time' });

/** A dead letter as headquarters' API lists it (dead-letters.ts DeadLetterView, without its tenant). */
export const HqDeadLetter = Type.Object(
  {
    id: Type.String({ description: 'DEVICE:SEQ' }),
    device: Type.String(),
    seq: Type.Integer({ minimum: 1 }),
    eventId: OrNull(Type.String()),
    kind: OrNull(Type.String({ description: "the event's kind as its envelope names it" })),
    reason: Type.String({ description: 'why it was set aside (the last attempt)' }),
    receivedAt: DateTime,
    retries: Type.Integer({ minimum: 0 }),
    retriedAt: OrNull(DateTime),
    resolvedAt: OrNull({ ...DateTime, description: 'when a replay projected it; null while it waits' }),
  },
  { additionalProperties: false },
);

const RetryBody = Type.Object(
  {
    ids: Type.Optional(Type.Array(Type.String({ maxLength: 220 }), { minItems: 1, maxItems: 500 })),
    all: Type.Optional(
      Type.Boolean({ description: "every waiting one of the tenant (of deviceId's device when given)" }),
    ),
    deviceId: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);

const RetryAnswer = Type.Object({
  outcomes: Type.Array(
    Type.Object({
      id: Type.String(),
      outcome: Type.Union([
        Type.Literal('replayed'),
        Type.Literal('alreadyReplayed'),
        Type.Literal('failed'),
        Type.Literal('unknown'),
      ]),
      reason: Type.Optional(Type.String({ description: 'why a failed one is still refused' })),
    }),
  ),
});

/** Headquarters' view and replay of its tenant's dead letters (docs/sync.md "Dead letters"), as the CLI's. */
export function deadLetterRoutes(pool: Pool): Route[] {
  return [
    route({
      method: 'get',
      path: '/hq-api/api/dead-letters',
      auth: 'bearer',
      body: 'none',
      // The schema is the query's check (docs/api.md "Contracts: /openapi.json and /asyncapi.json").
      schema: {
        query: Type.Object({
          deviceId: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'one device' })),
          all: Type.Optional(OneOf(['true', 'false'], 'true: replayed ones too')),
        }),
      },
      doc: {
        operationId: 'listDeadLetters',
        summary: "The tenant's dead letters: events the central set aside, and why",
        responses: ok('waiting ones (all=true: replayed ones too), by device and seq', Type.Array(HqDeadLetter)),
      },
      async handle({ query, principal }) {
        const list = await listDeadLetters(pool, {
          tenant: principal.tenantId,
          device: query.deviceId,
          resolved: query.all === 'true',
        });
        return json(
          200,
          list.map(({ tenant: _tenant, ...d }) => d),
        );
      },
    }),
    route({
      method: 'post',
      path: '/hq-api/api/dead-letters/retry',
      auth: 'write',
      body: 'json',
      schema: { body: RetryBody },
      doc: {
        operationId: 'retryDeadLetters',
        summary: 'Replay dead letters once their cause is fixed: the ids given, or all waiting ones',
        responses: ok('what became of each (a replay twice changes nothing more)', RetryAnswer),
      },
      async handle({ principal, valid }) {
        const body = valid();
        if ((body.ids === undefined) === (body.all !== true))
          throw invalidField('/ids', 'give ids, or all: true, not both');
        if (body.ids !== undefined && body.deviceId !== undefined)
          throw invalidField('/deviceId', 'deviceId goes with all: true');
        const ids = (body.ids ?? []).map((id, i) => {
          const parsed = parseDeadLetterId(id);
          if (!parsed) throw invalidField(`/ids/${i}`, "a dead letter's id is DEVICE:SEQ");
          return parsed;
        });
        const outcomes = await retryDeadLetters(
          pool,
          body.all
            ? { filter: { tenant: principal.tenantId, device: body.deviceId } }
            : { ids, tenant: principal.tenantId },
        );
        return json(200, { outcomes });
      },
    }),
  ];
}
