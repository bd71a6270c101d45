import { json, type Route } from '../../../http/types.js';
import { AppError, invalidField } from '../../../shared/errors.js';
import { EnrolRequest, HelloRequest } from '../../../shared/sync-messages.js';
import { PATHS } from '../../../shared/sync-protocol.js';
import { compile, limitOf, parseJson } from '../../../shared/validate.js';
import type { DeviceService } from './service.js';

const checkEnrol = compile(EnrolRequest);
const checkHello = compile(HelloRequest);
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The box-facing device routes; the batch route is the ingest module's. */
export function deviceRoutes(devices: DeviceService): Route[] {
  return [
    {
      method: 'post', path: PATHS.enrol, auth: 'none', body: 'json',
      handle: async ({ req, body }) => json(201, await devices.enrol(checkEnrol(body), req.remoteAddress)),
    },
    {
      // Raw: the signature covers the body's exact bytes.
      method: 'post', path: PATHS.hello, auth: 'none', body: 'raw',
      async handle({ req, body }) {
        let text: string;
        try {
          text = utf8.decode(body as Buffer);
        } catch {
          throw AppError.of('invalidBody', 'body is not valid UTF-8');
        }
        return json(200, await devices.hello(req, text, checkHello(parseJson(text))));
      },
    },
    {
      method: 'get', path: PATHS.events, auth: 'none', body: 'none',
      async handle({ req }) {
        const afterText = req.query.get('after') ?? '0';
        if (!/^\d{1,15}$/.test(afterText)) throw invalidField('after', 'after must be a seq (a non-negative integer)');
        return json(200, await devices.tail(req, Number(afterText), limitOf(req.query, 500, 1000)));
      },
    },
  ];
}
