import { Type } from '@sinclair/typebox';
import { invalidField } from '../../../shared/errors.js';

/** What a change of headquarters' catalogue answers (src/central/modules/catalogue/writer.ts ChangeResult). */
export const ChangeAnswer = Type.Object(
  {
    rev: Type.Integer({ minimum: 0, description: "the tenant's catalogue rev after the change" }),
    changed: Type.Boolean({ description: 'false when nothing differed: no rev was taken' }),
  },
  { additionalProperties: false },
);

export const PriceEverywhereAnswer = Type.Object(
  {
    ...ChangeAnswer.properties,
    menus: Type.Array(Type.String(), { description: 'the live menus that list the product, each now at the price' }),
  },
  { additionalProperties: false },
);

export const CatalogueStatus = Type.Object(
  {
    rev: Type.Integer({ minimum: 0, description: "the catalogue rev the boxes will get (the tenant's newest)" }),
    devices: Type.Array(
      Type.Object(
        {
          deviceId: Type.String(),
          name: Type.Union([Type.String(), Type.Null()]),
          venueId: Type.String(),
          catalogueRev: Type.Integer({ minimum: 0, description: 'the rev the box last asked with: what it applied' }),
          catalogueRevAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
            description: 'when it first asked with that rev: by then it had applied it',
          }),
          lastContactAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
        },
        { additionalProperties: false },
      ),
      { description: 'active devices' },
    ),
  },
  { additionalProperties: false },
);

export const IF_MATCH_HEADER = {
  name: 'If-Match',
  required: false,
  description:
    '`"<rev>"`: the row\'s rev as GET /hq-api/api/catalogue gave it; another current rev is a 412 revisionChanged ' +
    'and nothing is written. `*` or absent: no check',
};

// A rev as the catalogue writes it: no leading zeros, so "01" is not a second spelling of "1".
const ENTITY_TAG = /^"(0|[1-9]\d{0,14})"$/;

/**
 * The revs an If-Match header names (RFC 9110 13.1.1: a list of entity tags, or `*`); undefined for `*` or no
 * header. Our entity tags are strong, so a weak one (`W/"5"`) never matches, as the RFC's strong comparison says;
 * anything else is a 400 naming the header.
 */
export function ifMatchOf(header: string | undefined): number[] | undefined {
  if (header === undefined || header.trim() === '*') return undefined;
  const revs: number[] = [];
  for (const tag of header.split(',').map((t) => t.trim())) {
    if (/^W\/"[^"]*"$/.test(tag)) continue;
    const m = ENTITY_TAG.exec(tag);
    if (!m) throw invalidField('If-Match', 'If-Match must be "<rev>" (the row\'s rev in double quotes) or *');
    revs.push(Number(m[1]));
  }
  return revs;
}
