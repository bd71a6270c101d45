import { Type } from '@sinclair/typebox';
import { json, type Route, route } from '../../../http/types.js';
import { AppError } from '../../../shared/errors.js';
import {
  EnrolRequest,
  EnrolResponse,
  HelloRequest,
  HelloResponse,
  StandbyLeaseGranted,
  StandbyLeaseRefused,
  StandbyLeaseRequest,
  TailResponse,
} from '../../../shared/sync-messages.js';
import { PATHS } from '../../../shared/sync-protocol.js';
import { parseJson } from '../../../shared/validate.js';
import { LimitParam, MAX_COUNTER } from '../../../http/contracts/query.js';
import { SIGNED_HEADERS } from '../../contracts.js';
import type { DeviceService } from './service.js';
import type { StandbyLease } from './standby-lease.js';

const TailQuery = Type.Object({
  after: Type.Optional(
    Type.Integer({ minimum: 0, maximum: MAX_COUNTER, default: 0, description: 'the seq after which to start' }),
  ),
  limit: LimitParam(500, 1000),
});
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** A signed body's text: the signature covers exactly these bytes, so they must be one UTF-8 text. */
function textOf(body: unknown): string {
  try {
    return utf8.decode(body as Buffer);
  } catch {
    throw AppError.of('invalidBody', 'body is not valid UTF-8');
  }
}

/** The box-facing device routes; the batch route is the ingest module's. */
export function deviceRoutes(devices: DeviceService, standbyLease: StandbyLease): Route[] {
  return [
    route({
      method: 'post',
      path: PATHS.enrol,
      auth: 'none',
      body: 'json',
      schema: { body: EnrolRequest },
      doc: {
        operationId: 'enrolDevice',
        summary: 'Enrol a box with a one-time code and its public key',
        tag: 'sync-api',
        responses: {
          201: { description: "the device's identity", schema: EnrolResponse },
          429: { description: 'too many failed enrolments from this address', headers: ['Retry-After'] },
        },
      },
      handle: async ({ req, valid }) => json(201, await devices.enrol(valid(), req.remoteAddress)),
    }),
    route({
      // Raw: the signature covers the body's exact bytes.
      method: 'post',
      path: PATHS.hello,
      auth: 'none',
      body: 'raw',
      schema: { body: HelloRequest },
      doc: {
        operationId: 'sendHello',
        summary: "A box's hello (signed): the central's head for it, its clock and protocols",
        tag: 'sync-api',
        requestType: 'application/json',
        headers: SIGNED_HEADERS,
        responses: { 200: { description: "the device's head", schema: HelloResponse } },
      },
      async handle({ req, body, valid }) {
        const text = textOf(body);
        return json(200, await devices.hello(req, text, valid(parseJson(text))));
      },
    }),
    route({
      // Raw, as hello: the signature covers the body's exact bytes.
      method: 'post',
      path: PATHS.standbyLease,
      auth: 'none',
      body: 'raw',
      schema: { body: StandbyLeaseRequest },
      doc: {
        operationId: 'requestStandbyLease',
        summary: "A standby pair's lease (signed): the primary renews its term, the standby claims the next",
        description:
          'The central is the witness of a venue\'s primary and hot standby, which share this device (docs/sync.md "The standby lease"). ' +
          'An unknown or revoked device, or a bad signature, is 401 unauthorized; a body outside the schema 400 invalidField.',
        tag: 'sync-api',
        requestType: 'application/json',
        headers: SIGNED_HEADERS,
        responses: {
          200: { description: "granted: the lease is the asker's for ttlMs from now", schema: StandbyLeaseGranted },
          409: {
            description: 'refused (fenced by a higher term, or another box holds a live lease): the lease held now',
            schema: StandbyLeaseRefused,
          },
        },
      },
      async handle({ req, body, valid }) {
        const text = textOf(body);
        const answer = await standbyLease.request(req, text, valid(parseJson(text)));
        return json(answer.granted ? 200 : 409, answer);
      },
    }),
    route({
      method: 'get',
      path: PATHS.events,
      auth: 'none',
      body: 'none',
      schema: { query: TailQuery },
      doc: {
        operationId: 'getDeviceEvents',
        summary: "The device's own events after a seq (signed), for a box restored from an old copy",
        tag: 'sync-api',
        headers: SIGNED_HEADERS,
        responses: { 200: { description: 'a page of events with the proof of the head', schema: TailResponse } },
      },
      handle: async ({ req, query }) => json(200, await devices.tail(req, query.after ?? 0, query.limit ?? 500)),
    }),
  ];
}
