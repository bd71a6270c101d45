/**
 * The catalogue's shapes, as the box validates them and the central stores them (docs/sync.md "Down: the
 * catalogue"): venues, menus with their products, and the provisioning file that carries a whole chain.
 * The box (provisioning, venues, menus) and the central (import, headquarters' API) import this one file.
 */
import { createHash } from 'node:crypto';
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { Price, ProductId, Uuid } from './types.js';

const Time = Type.String({ pattern: '^(([01]\\d|2[0-3]):[0-5]\\d(:[0-5]\\d)?|24:00(:00)?)$' });
export const Interval = Type.Object({ from: Time, to: Time });
export const DAYS = ['MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT', 'SUN'] as const;
export type Day = (typeof DAYS)[number];

export const ChannelConstraint = Type.Object({
  active: Type.Boolean(),
  minDeliveryTime: Type.String({ pattern: '^\\d{2}:[0-5]\\d:[0-5]\\d$' }),
  minOrderValue: Type.Optional(Price),
  week: Type.Object(
    Object.fromEntries(DAYS.map((d) => [d, Type.Array(Interval, { maxItems: 12 })])) as Record<
      Day,
      ReturnType<typeof Type.Array<typeof Interval>>
    >,
  ),
});
export type ChannelConstraint = Static<typeof ChannelConstraint>;

export const CHANNELS = ['DELIVERY', 'TAKE_AWAY', 'DINE_IN'] as const;
export type Channel = (typeof CHANNELS)[number];

/** A venue exactly as GET /venue-api/api/nearest returns it (and as provisioning gives it). */
export const Venue = Type.Object(
  {
    id: Uuid,
    name: Type.String({ minLength: 1, maxLength: 200 }),
    menu: Type.String({ minLength: 1, maxLength: 100 }),
    active: Type.Boolean(),
    address: Type.Object({
      street: Type.String(),
      number: Type.String(),
      postal: Type.String(),
      city: Type.String(),
      country: Type.String(),
    }),
    timeZone: Type.String({ minLength: 1 }),
    geoPosition: Type.Object({
      lat: Type.Number({ minimum: -90, maximum: 90 }),
      lng: Type.Number({ minimum: -180, maximum: 180 }),
    }),
    channelConstraints: Type.Partial(
      Type.Object({ DELIVERY: ChannelConstraint, TAKE_AWAY: ChannelConstraint, DINE_IN: ChannelConstraint }),
    ),
    warehouse: Uuid,
  },
  { additionalProperties: false },
);
export type Venue = Static<typeof Venue>;

const Literals = Type.Record(Type.String(), Type.String());

export const Product = Type.Object({
  kind: Type.Literal('svc/product'),
  id: ProductId,
  details: Type.Object({
    literals: Literals,
    media: Type.Array(Type.Object({ url: Type.String(), name: Type.String() })),
  }),
  price: Price,
  minPrice: Type.Union([Type.String(), Type.Null()]),
  selCtx: Type.String(),
  fltCtx: Type.String(),
  _: Type.Record(Type.String(), Type.String()),
  /** Provisioning only: the channels this product is sold on (all when absent). Not served. */
  channels: Type.Optional(Type.Array(Type.Union(CHANNELS.map((c) => Type.Literal(c))), { minItems: 1 })),
});
export type Product = Static<typeof Product>;

export interface Category {
  kind: 'svc/group/category';
  id: string;
  details: { literals: Record<string, string> };
  items: MenuNode[];
}
export type MenuNode = Category | Product;

export const Category: TSchema = Type.Recursive((Self) =>
  Type.Object({
    kind: Type.Literal('svc/group/category'),
    id: Type.String({ minLength: 1, maxLength: 100 }),
    details: Type.Object({ literals: Literals }),
    items: Type.Array(Type.Union([Self, Product])),
  }),
);

export const isProduct = (node: MenuNode): node is Product => node.kind === 'svc/product';

export function productsOf(node: MenuNode): Product[] {
  return isProduct(node) ? [node] : node.items.flatMap(productsOf);
}

export const Username = Type.String({ minLength: 1, maxLength: 100, pattern: '^(?!anonymous$)' });
export const Scope = Type.String({ pattern: '^read( write)?$' });
export const MenuId = Type.String({ minLength: 1, maxLength: 100 });

/** The provisioning file (native-config/demo.json has this shape). */
export const Provisioning = Type.Object({
  tenants: Type.Array(
    Type.Object({
      id: Uuid,
      name: Type.String({ minLength: 1 }),
      clients: Type.Array(
        Type.Object({ clientId: Type.String({ minLength: 1 }), clientSecret: Type.String({ minLength: 8 }) }),
      ),
      users: Type.Array(Type.Object({ username: Username, password: Type.String({ minLength: 8 }), scope: Scope })),
      venues: Type.Array(Venue),
      menus: Type.Array(Type.Object({ id: MenuId, root: Category })),
      warehouses: Type.Array(Type.Object({ id: Uuid, name: Type.String({ minLength: 1 }) })),
    }),
  ),
});
export type Provisioning = Static<typeof Provisioning>;
export type TenantSpec = Provisioning['tenants'][number];

/** Staff user ids are derived from tenant and username: the box's provisioning and the central give the same id. */
export function staffUserId(tenantId: string, username: string): string {
  const h = createHash('sha256').update(`staff\0${tenantId}\0${username}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** The JSON pointer of a product id inside a menu tree that lists it a second time; undefined when none does. */
export function duplicateProduct(root: MenuNode, base = ''): { pointer: string; id: string } | undefined {
  const seen = new Set<string>();
  const walk = (node: MenuNode, at: string): { pointer: string; id: string } | undefined => {
    if (isProduct(node)) {
      if (seen.has(node.id)) return { pointer: `${at}/id`, id: node.id };
      seen.add(node.id);
      return undefined;
    }
    for (let i = 0; i < node.items.length; i++) {
      const found = walk(node.items[i]!, `${at}/items/${i}`);
      if (found) return found;
    }
    return undefined;
  };
  return walk(root, base);
}

/** A tenant's references that do not resolve: a venue's menu or warehouse, a product listed twice in a menu. */
export function referenceProblems(tenant: TenantSpec): { pointer: string; message: string }[] {
  const problems: { pointer: string; message: string }[] = [];
  const menus = new Set(tenant.menus.map((m) => m.id));
  const warehouses = new Set(tenant.warehouses.map((w) => w.id));
  tenant.venues.forEach((v, i) => {
    if (!menus.has(v.menu))
      problems.push({ pointer: `/venues/${i}/menu`, message: `venue ${v.id} names unknown menu ${v.menu}` });
    if (!warehouses.has(v.warehouse)) {
      problems.push({
        pointer: `/venues/${i}/warehouse`,
        message: `venue ${v.id} names unknown warehouse ${v.warehouse}`,
      });
    }
  });
  tenant.menus.forEach((m, i) => {
    const dup = duplicateProduct(m.root as MenuNode, `/menus/${i}/root`);
    if (dup) problems.push({ pointer: dup.pointer, message: `menu ${m.id} lists product ${dup.id} twice` });
  });
  return problems;
}
