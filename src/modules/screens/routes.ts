import { Type } from '@sinclair/typebox';
import { json, type Route } from '../../http/types.js';
import { AppError } from '../../shared/errors.js';

/**
 * What the box's screens need before anyone signs in (README "Screens"): the tenant for `x-tenant`, the OAuth
 * client they sign in with, the venue's language, the currency of its prices and a default venue. The client is a public client (a kiosk's
 * secret is readable by anyone at the kiosk), so nothing here is a secret the LAN does not already have.
 */
export interface ScreensBootstrap {
  tenant: string;
  clientId: string;
  clientSecret: string;
  language: string;
  /** ISO 4217: the currency of every price the screens show (docs/screens.md "Money and time"). */
  currency: string;
  venue: string | null;
}

export function screensRoutes(bootstrap: ScreensBootstrap | undefined): Route[] {
  return [
    {
      method: 'get',
      path: '/screens-api/bootstrap',
      auth: 'none',
      body: 'none',
      doc: {
        operationId: 'getScreensBootstrap',
        summary: "What the box's screens need before anyone signs in (404 notFound: no tenant known for them)",
        tag: 'screens',
        responses: {
          200: {
            description:
              'the tenant, the public OAuth client of the screens, the language, the currency and a default venue',
            schema: Type.Object(
              {
                tenant: Type.String(),
                clientId: Type.String(),
                clientSecret: Type.String(),
                language: Type.String(),
                currency: Type.String({ pattern: '^[A-Z]{3}$' }),
                venue: Type.Union([Type.String(), Type.Null()]),
              },
              { additionalProperties: false },
            ),
          },
        },
      },
      handle() {
        if (!bootstrap) {
          throw AppError.of(
            'notFound',
            'this box knows no tenant for its screens: set screens.tenant, screens.clientId ' +
              'and screens.clientSecret in the config, or start it with a provisioning file',
          );
        }
        return json(200, bootstrap);
      },
    },
  ];
}

interface ProvisionedTenant {
  id?: unknown;
  clients?: { clientId?: unknown; clientSecret?: unknown }[];
  venues?: { id?: unknown }[];
}

/**
 * The screens' tenant and client: the config's `screens` values where set, else the first tenant of the
 * provisioning documents the box started with (the demo's with --demo), its first OAuth client and first venue.
 */
export function resolveScreensBootstrap(
  config: {
    language: string;
    currency: string;
    tenant?: string;
    clientId?: string;
    clientSecret?: string;
    venue?: string;
  },
  provisioning: { document: unknown }[],
): ScreensBootstrap | undefined {
  const tenants = provisioning.flatMap((p) => (p.document as { tenants?: ProvisionedTenant[] })?.tenants ?? []);
  const tenant = tenants.find((t) => config.tenant === undefined || t.id === config.tenant);
  const client = tenant?.clients?.find((c) => config.clientId === undefined || c.clientId === config.clientId);
  const tenantId = config.tenant ?? (typeof tenant?.id === 'string' ? tenant.id : undefined);
  const clientId = config.clientId ?? (typeof client?.clientId === 'string' ? client.clientId : undefined);
  const clientSecret =
    config.clientSecret ?? (typeof client?.clientSecret === 'string' ? client.clientSecret : undefined);
  if (tenantId === undefined || clientId === undefined || clientSecret === undefined) return undefined;
  const firstVenue = tenant?.venues?.[0]?.id;
  return {
    tenant: tenantId,
    clientId,
    clientSecret,
    language: config.language,
    currency: config.currency,
    venue: config.venue ?? (typeof firstVenue === 'string' ? firstVenue : null),
  };
}
