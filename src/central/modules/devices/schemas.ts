import { Type } from '@sinclair/typebox';
import { UpdateReport } from '../../../shared/release-schemas.js';
import { Head } from '../../../shared/sync-messages.js';
import { Uuid } from '../../../shared/types.js';

const DateTime = Type.String({ format: 'date-time' });
const OrNull = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

/** A device as headquarters' API lists it (src/central/modules/devices/repo.ts DeviceView, without its tenant). */
export const HqDevice = Type.Object(
  {
    id: Type.String(),
    venue: Type.String(),
    venueName: OrNull(Type.String()),
    name: OrNull(Type.String({ description: 'what the box sent at enrolment' })),
    status: Type.Union([Type.Literal('active'), Type.Literal('revoked')]),
    keyId: Type.String(),
    head: Head,
    lagEvents: Type.Integer({ minimum: 0, description: 'events the box has that the central has not' }),
    lastContactAt: OrNull(DateTime),
    online: Type.Boolean({ description: 'heard from within the last 15 minutes' }),
    clockOffsetMs: OrNull(Type.Integer({ description: "the box's clock less the central's at its last hello" })),
    deadLetters: Type.Integer({ minimum: 0 }),
    enrolledAt: DateTime,
    version: OrNull(Type.String({ description: 'the program it runs, from its last hello' })),
    arch: OrNull(Type.String()),
    update: OrNull(UpdateReport),
    updateAt: OrNull(DateTime),
    catalogueRev: Type.Integer({
      minimum: 0,
      description: 'the catalogue rev the box last asked with: what it applied',
    }),
    catalogueRevAt: OrNull(
      Type.String({ format: 'date-time', description: 'when it first asked with that rev: by then it had applied it' }),
    ),
    oldestPendingAt: OrNull(
      Type.String({
        format: 'date-time',
        description: "when its oldest unacknowledged event was written (central's clock)",
      }),
    ),
  },
  { additionalProperties: false },
);

export const HqDeviceList = Type.Array(HqDevice);

export const EnrolCodeBody = Type.Object(
  {
    venueId: Type.String({ pattern: Uuid.pattern, description: 'a live venue of the tenant' }),
    ttlHours: Type.Optional(Type.Integer({ minimum: 1, maximum: 168, description: 'validity, default 24' })),
  },
  { additionalProperties: false },
);

export const EnrolCodeAnswer = Type.Object(
  {
    code: Type.String({ description: 'ABCD-EFGH-JKMN-PQRS: 80 random bits; only its sha256 is stored' }),
    venueId: Type.String(),
    expiresAt: DateTime,
    command: Type.String({ description: 'the line to type on the box' }),
  },
  { additionalProperties: false },
);
