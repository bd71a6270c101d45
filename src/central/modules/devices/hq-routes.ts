import { type HttpRequest, json, type Route, route } from '../../../http/types.js';
import { originOf } from '../../../http/origin.js';
import { invalidField, notFound } from '../../../shared/errors.js';
import { isUuid } from '../../../shared/ids.js';
import { ok } from '../../contracts.js';
import { CatalogueStatus } from '../catalogue/schemas.js';
import { EnrolCodeAnswer, EnrolCodeBody, HqDevice } from './schemas.js';
import type { DeviceService } from './service.js';

const DEFAULT_CODE_TTL_HOURS = 24;
/**
 * The central's URL as this request reached it, for the line typed on the box: the Host header, https when a TLS
 * proxy in front says so (X-Forwarded-Proto), else http (the central itself speaks plain HTTP).
 */
function centralUrlOf(req: HttpRequest): string {
  const origin = originOf(req);
  if (origin === undefined) throw invalidField('Host', 'the Host header must name the central (host[:port])');
  return origin;
}

/** Headquarters' fleet actions (docs/sync.md "The headquarters console"): enrolment codes, revocation, who has what. */
export function deviceHqRoutes(devices: DeviceService, catalogue: { rev(tenantId: string): Promise<number> }): Route[] {
  return [
    route({
      method: 'post',
      path: '/hq-api/api/enrol-codes',
      auth: 'write',
      body: 'json',
      schema: { body: EnrolCodeBody },
      doc: {
        operationId: 'createEnrolCode',
        summary: 'A one-time enrolment code for a box of a venue, with the command to type on the box',
        responses: { 201: { description: 'the code (shown once)', schema: EnrolCodeAnswer } },
      },
      async handle({ req, principal, valid }) {
        const body = valid();
        const central = centralUrlOf(req);
        const { code, expiresAt } = await devices.createHqCode(
          principal.tenantId,
          body.venueId,
          body.ttlHours ?? DEFAULT_CODE_TTL_HOURS,
        );
        const command = `venue-box sync enrol --central ${central} --code ${code}`;
        return json(201, { code, venueId: body.venueId, expiresAt, command });
      },
    }),
    {
      method: 'post',
      path: '/hq-api/api/devices/:id/revoke',
      auth: 'write',
      body: 'none',
      doc: {
        operationId: 'revokeDevice',
        summary: 'Revoke a box: its batches, hello and catalogue polls get 401 from now on',
        params: { id: 'the device id' },
        responses: ok('the device (a revoked one again: unchanged)', HqDevice),
      },
      async handle({ req, principal }) {
        const id = req.params.id!;
        if (!isUuid(id)) throw notFound('device');
        const { tenant: _tenant, ...device } = await devices.revokeOf(principal.tenantId, id);
        return json(200, device);
      },
    },
    {
      method: 'get',
      path: '/hq-api/api/catalogue/status',
      auth: 'bearer',
      body: 'none',
      doc: {
        operationId: 'getCatalogueStatus',
        summary: "What the boxes will get and what each applied: the catalogue rev, each active box's rev",
        responses: ok('the rev and the active devices', CatalogueStatus),
      },
      async handle({ principal }) {
        const [rev, list] = await Promise.all([catalogue.rev(principal.tenantId), devices.list(principal.tenantId)]);
        return json(200, {
          rev,
          devices: list
            .filter((d) => d.status === 'active')
            .map((d) => ({
              deviceId: d.id,
              name: d.name,
              venueId: d.venue,
              catalogueRev: d.catalogueRev,
              catalogueRevAt: d.catalogueRevAt,
              lastContactAt: d.lastContactAt,
            })),
        });
      },
    },
  ];
}
