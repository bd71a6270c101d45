import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { Price, ProductId } from '../../shared/types.js';
import { CHANNELS } from '../venues/schemas.js';

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
