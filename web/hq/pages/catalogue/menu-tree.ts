/**
 * The menu tree as PUT /hq-api/api/menus/:id takes it (`{root}`: src/shared/catalogue-schemas.ts Category and
 * Product, which this file mirrors because that file needs Node's crypto). Pure functions over a copy of the tree:
 * the editor changes a copy, never what the catalogue holds, until the central accepts the whole menu.
 */
export const CHANNELS = ['DELIVERY', 'TAKE_AWAY', 'DINE_IN'] as const;
export type Channel = (typeof CHANNELS)[number];

export interface Product {
  kind: 'svc/product';
  id: string;
  details: { literals: Record<string, string>; media: { url: string; name: string }[] };
  price: string;
  minPrice: string | null;
  selCtx: string;
  fltCtx: string;
  _: Record<string, string>;
  /** The channels the product is sold on; all when absent. */
  channels?: Channel[];
}
export interface Category {
  kind: 'svc/group/category';
  id: string;
  details: { literals: Record<string, string> };
  items: MenuNode[];
}
export type MenuNode = Category | Product;
/** A node's place: the indices of `items` from the root down ([] is the root). */
export type Path = number[];

export const isProduct = (n: MenuNode): n is Product => n.kind === 'svc/product';

export function nodeAt(root: Category, path: Path): MenuNode | undefined {
  let node: MenuNode = root;
  for (const i of path) {
    if (isProduct(node)) return undefined;
    const next: MenuNode | undefined = node.items[i];
    if (!next) return undefined;
    node = next;
  }
  return node;
}

/** The JSON pointer of a node in the PUT's body (`/root/items/0/items/2`): the central names errors by it. */
export const pointerOf = (path: Path): string => `/root${path.map((i) => `/items/${i}`).join('')}`;

/** A copy of the tree with `change` applied to the copy. */
export function edit(root: Category, change: (copy: Category) => void): Category {
  const copy = structuredClone(root);
  change(copy);
  return copy;
}

/** Moves the node at `path` one place up (-1) or down (+1) among its siblings; the new path, or the old one. */
export function move(root: Category, path: Path, by: -1 | 1): { root: Category; path: Path } {
  const parent = nodeAt(root, path.slice(0, -1));
  const i = path[path.length - 1];
  if (!parent || isProduct(parent) || i === undefined) return { root, path };
  const j = i + by;
  if (j < 0 || j >= parent.items.length) return { root, path };
  const next = edit(root, (copy) => {
    const items = (nodeAt(copy, path.slice(0, -1)) as Category).items;
    [items[i], items[j]] = [items[j]!, items[i]!];
  });
  return { root: next, path: [...path.slice(0, -1), j] };
}

export function remove(root: Category, path: Path): Category {
  return edit(root, (copy) => {
    const parent = nodeAt(copy, path.slice(0, -1)) as Category;
    parent.items.splice(path[path.length - 1]!, 1);
  });
}

/** Every id in the tree (a new node's id must differ from all of them). */
export function idsOf(node: MenuNode, into = new Set<string>()): Set<string> {
  into.add(node.id);
  if (!isProduct(node)) for (const c of node.items) idsOf(c, into);
  return into;
}

/** The literal keys the menu uses (its languages: `name`, `description`, `name_en`...), products and categories apart. */
export function literalKeys(root: Category): { product: string[]; category: string[] } {
  const product = new Set<string>(['name', 'description']);
  const category = new Set<string>(['name']);
  const walk = (n: MenuNode) => {
    for (const k of Object.keys(n.details.literals)) (isProduct(n) ? product : category).add(k);
    if (!isProduct(n)) n.items.forEach(walk);
  };
  walk(root);
  return { product: [...product], category: [...category] };
}

export function newId(prefix: string, taken: Set<string>): string {
  for (;;) {
    const id = `${prefix}-${crypto.getRandomValues(new Uint32Array(1))[0]!.toString(36)}`;
    if (!taken.has(id)) return id;
  }
}

export function newProduct(id: string, category: string): Product {
  return {
    kind: 'svc/product',
    id,
    details: {
      literals: { name: '', description: '' },
      media: [
        { url: '', name: 'MAIN_IMG' },
        { url: '', name: 'DETAILS_IMG' },
      ],
    },
    price: '0.00',
    minPrice: null,
    selCtx: '',
    fltCtx: '',
    _: { category },
  };
}

export function newCategory(id: string): Category {
  return { kind: 'svc/group/category', id, details: { literals: { name: '' } }, items: [] };
}

/** The index of the product's main image in `details.media` (MAIN_IMG, else the first). */
export function mainImageIndex(p: Product): number {
  const i = p.details.media.findIndex((m) => m.name === 'MAIN_IMG');
  return Math.max(i, 0);
}

/**
 * JSON with every object's keys sorted: the central keeps a tree as PostgreSQL jsonb, which orders keys its own way,
 * so two equal trees are compared by this text, never by JSON.stringify's order of insertion.
 */
export function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : v,
  );
}
