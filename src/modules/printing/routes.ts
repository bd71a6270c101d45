import { Type } from '@sinclair/typebox';
import { json, type Route, route } from '../../http/types.js';
import { LimitParam, OneOf } from '../../http/contracts/query.js';
import { notFound } from '../../shared/errors.js';
import { isUuid } from '../../shared/ids.js';
import { JOB_STATES, ReprintBody } from './schemas.js';
import type { PrintingService } from './service.js';

const BASE = '/printing-api/api';
const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 1000;

/** `?printer=NAME&state=S&limit=N` of the job list (newest first): the schema is their check. */
const JobListQuery = Type.Object({
  printer: Type.Optional(Type.String({ minLength: 1, description: "a printer's name" })),
  state: Type.Optional(OneOf(JOB_STATES, "the jobs' state")),
  limit: LimitParam(DEFAULT_LIMIT, MAX_LIMIT),
});

const Instant = Type.String({ format: 'date-time' });
const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);
const PrinterState = Type.String({ enum: ['ok', 'paperNearEnd', 'paperOut', 'offline', 'unknown'] });
const PrinterSchema = Type.Object(
  {
    name: Type.String(),
    venue: Type.String(),
    role: Type.String({ enum: ['kitchen', 'counter'] }),
    path: Type.String({ description: 'the serial device, or tcp://host:port for a network printer' }),
    backup: Nullable(Type.String()),
    categories: Type.Union([Type.Array(Type.String()), Type.Null()]),
    status: PrinterState,
    statusSince: Nullable(Instant),
    divertedTo: Nullable(Type.String()),
    queueDepth: Type.Integer(),
    oldestJobAgeMs: Type.Union([Type.Number(), Type.Null()]),
    lastError: Type.Union([
      Type.Object({ reason: Type.String(), message: Type.String(), at: Instant }, { additionalProperties: false }),
      Type.Null(),
    ]),
  },
  { additionalProperties: false },
);
const JobSchema = Type.Object(
  {
    id: Type.String(),
    printer: Nullable(Type.String()),
    venue: Type.String(),
    orderId: Type.String(),
    kind: Type.String({ enum: ['kitchen', 'claim', 'cancel'] }),
    round: Type.Integer(),
    state: Type.String({ enum: [...JOB_STATES] }),
    copyOf: Nullable(Type.String()),
    attempts: Type.Integer(),
    lastError: Nullable(Type.String()),
    printedOn: Nullable(Type.String()),
    created: Instant,
    done: Nullable(Instant),
    ticket: Type.Object(
      { kind: Type.String(), orderId: Type.String(), lines: Type.Array(Type.Object({ text: Type.String() })) },
      {
        description: 'everything the ticket prints: venue, order type, claim code, round, local time, lines and totals',
      },
    ),
  },
  { additionalProperties: false },
);

/** The staff API of the printers (scope write): status, jobs, reprint. */
export function printingRoutes(printing: PrintingService): Route[] {
  return [
    {
      method: 'get',
      path: `${BASE}/printers`,
      auth: 'write',
      body: 'none',
      doc: {
        operationId: 'listPrinters',
        summary: "The venues' printers and their status (staff)",
        responses: {
          200: {
            description: 'the printers',
            schema: Type.Object({ items: Type.Array(PrinterSchema) }, { additionalProperties: false }),
          },
        },
      },
      handle: ({ principal }) => json(200, { items: printing.listPrinters(principal) }),
    },
    route({
      method: 'get',
      path: `${BASE}/jobs`,
      auth: 'write',
      body: 'none',
      schema: { query: JobListQuery },
      doc: {
        operationId: 'listPrintJobs',
        summary: 'Print jobs, newest first (staff)',
        responses: {
          200: {
            description: 'the jobs',
            schema: Type.Object({ items: Type.Array(JobSchema) }, { additionalProperties: false }),
          },
        },
      },
      handle: ({ query, principal }) =>
        json(200, { items: printing.listJobs(principal, { ...query, limit: query.limit ?? DEFAULT_LIMIT }) }),
    }),
    route({
      method: 'post',
      path: `${BASE}/jobs/:id/reprint`,
      auth: 'write',
      body: 'optional-json',
      schema: { body: ReprintBody },
      doc: {
        operationId: 'reprintJob',
        summary: 'Print a job again, marked COPY / KOPIA (staff)',
        params: { id: 'the print job id' },
        responses: { 201: { description: 'the new job', schema: JobSchema } },
      },
      handle({ req, principal, body, valid }) {
        const id = req.params.id;
        if (!id || !isUuid(id)) throw notFound('print job');
        return json(201, printing.reprint(principal, id, valid(body ?? {})));
      },
    }),
  ];
}
