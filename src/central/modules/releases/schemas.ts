import { Type } from '@sinclair/typebox';
import { DATE_TIME_PATTERN, InstallWindow, Version } from '../../../shared/release-schemas.js';
import { UUID_PATTERN } from '../../../shared/types.js';

const Percent = Type.Integer({ minimum: 1, maximum: 100 });

export const RolloutBody = Type.Object(
  {
    version: Version,
    devices: Type.Union(
      [
        Type.Object({ all: Type.Literal(true) }, { additionalProperties: false }),
        Type.Object(
          { venues: Type.Array(Type.String({ pattern: UUID_PATTERN }), { minItems: 1, maxItems: 10_000 }) },
          { additionalProperties: false },
        ),
        Type.Object({ percent: Percent }, { additionalProperties: false }),
      ],
      { description: 'every device, the devices of some venues, or a stable percentage of the devices' },
    ),
    startsAt: Type.Optional(
      Type.String({ pattern: DATE_TIME_PATTERN, maxLength: 40, description: 'an ISO date-time; default now' }),
    ),
    window: Type.Optional(InstallWindow),
    stages: Type.Optional(
      Type.Array(Type.Number({ exclusiveMinimum: 0, maximum: 100 }), {
        minItems: 1,
        maxItems: 20,
        description: 'cumulative percentages of the selected devices, ascending, ending in 100; default [10, 100]',
      }),
    ),
    stageMinutes: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 525_600, description: 'the least time a stage lasts; default 60' }),
    ),
    haltShare: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: 1,
        description: 'halts when rolledBack / (healthy + rolledBack) is above it; default 0.2',
      }),
    ),
  },
  { additionalProperties: false },
);

export const HaltBody = Type.Object(
  { reason: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })) },
  { additionalProperties: false },
);
