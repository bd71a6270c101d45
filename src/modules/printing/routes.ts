import { json, type Route } from '../../http/types.js';
import { invalidField, notFound } from '../../shared/errors.js';
import { isUuid } from '../../shared/ids.js';
import { compile, limitOf } from '../../shared/validate.js';
import { JOB_STATES, type JobQuery, type JobState, ReprintBody } from './schemas.js';
import type { PrintingService } from './service.js';

const BASE = '/printing-api/api';
const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 1000;
const validateReprint = compile(ReprintBody);

/** `?printer=NAME&state=S&limit=N` of the job list (newest first). */
export function parseJobQuery(query: URLSearchParams): JobQuery {
  const out: JobQuery = { limit: DEFAULT_LIMIT };
  const printer = query.get('printer');
  if (printer !== null) {
    if (printer === '') throw invalidField('printer', 'printer must be a printer name');
    out.printer = printer;
  }
  const state = query.get('state');
  if (state !== null) {
    if (!(JOB_STATES as readonly string[]).includes(state)) {
      throw invalidField('state', `state must be one of ${JOB_STATES.join(', ')}`);
    }
    out.state = state as JobState;
  }
  out.limit = limitOf(query, DEFAULT_LIMIT, MAX_LIMIT);
  return out;
}

/** The staff API of the printers (scope write): status, jobs, reprint. */
export function printingRoutes(printing: PrintingService): Route[] {
  return [
    {
      method: 'get', path: `${BASE}/printers`, auth: 'write', body: 'none',
      handle: ({ principal }) => json(200, { items: printing.listPrinters(principal) }),
    },
    {
      method: 'get', path: `${BASE}/jobs`, auth: 'write', body: 'none',
      handle: ({ req, principal }) => json(200, { items: printing.listJobs(principal, parseJobQuery(req.query)) }),
    },
    {
      method: 'post', path: `${BASE}/jobs/:id/reprint`, auth: 'write', body: 'optional-json',
      handle({ req, principal, body }) {
        const id = req.params.id;
        if (!id || !isUuid(id)) throw notFound('print job');
        return json(201, printing.reprint(principal, id, validateReprint(body ?? {})));
      },
    },
  ];
}
