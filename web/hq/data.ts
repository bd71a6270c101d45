import type { CatalogueItem, ItemData } from '../../src/shared/catalogue-items.js';
import { Store, useStore } from '../store.js';
import { hq } from './api.js';

/**
 * The tenant's catalogue as the central holds it (GET /hq-api/api/catalogue: every live row with the rev of its
 * last change), shared by the pages: venue pickers, menus, warehouses. Read once and again after each change.
 */
export interface Catalogue {
  tenant: string;
  rev: number;
  items: CatalogueItem[];
}
export type Live<T extends keyof ItemData> = { id: string; rev: number; data: ItemData[T] };

const catalogue = new Store<Catalogue | null>(null);
let loading: Promise<Catalogue> | undefined;

export function loadCatalogue(force = false): Promise<Catalogue> {
  if (!force && catalogue.value) return Promise.resolve(catalogue.value);
  loading ??= hq.get<Catalogue>('/catalogue').then(
    (c) => {
      loading = undefined;
      catalogue.set(c);
      return c;
    },
    (err: unknown) => {
      loading = undefined;
      throw err;
    },
  );
  return loading;
}

/** The catalogue, loaded on first use; null until it is. */
export function useCatalogue(): Catalogue | null {
  const value = useStore(catalogue);
  if (!value) void loadCatalogue().catch(() => undefined);
  return value;
}

/** The live rows of one type, with their revs. */
export function liveOf<T extends keyof ItemData>(c: Catalogue | null, type: T): Live<T>[] {
  if (!c) return [];
  return c.items
    .filter((i): i is Extract<CatalogueItem, { type: T; retired: false }> => i.type === type && !i.retired)
    .map((i) => ({ id: i.id, rev: i.rev, data: i.data as ItemData[T] }));
}

export interface VenueRef {
  id: string;
  name: string;
}

/** The tenant's venues by name (for pickers and labels). */
export function venuesOf(c: Catalogue | null): VenueRef[] {
  return liveOf(c, 'venue')
    .map((v) => ({ id: v.id, name: String((v.data as { name?: unknown }).name ?? v.id) }))
    .sort((a, b) => a.name.localeCompare(b.name));
}
