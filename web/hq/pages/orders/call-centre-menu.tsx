import { type Catalogue, liveOf } from '../../data.js';
import { money, t } from '../../i18n.js';

/** The interface's menu tree as GET /hq-api/api/catalogue gives it (src/shared/catalogue-schemas.ts: MenuNode). */
export interface MenuProduct {
  kind: 'svc/product';
  id: string;
  details: { literals: Record<string, string> };
  price: string;
}
interface MenuCategory {
  kind: 'svc/group/category';
  id: string;
  details: { literals: Record<string, string> };
  items: (MenuCategory | MenuProduct)[];
}

/** The venue's menu (the venue row's `menu`) and the products headquarters flagged sold out there. */
export function venueMenu(c: Catalogue | null, venueId: string) {
  const venue = liveOf(c, 'venue').find((v) => v.id === venueId);
  const menu = venue && liveOf(c, 'menu').find((m) => m.id === venue.data.menu);
  const soldOut = new Set(
    liveOf(c, 'soldOut')
      .filter((s) => s.data.venue === venueId)
      .map((s) => s.data.productId),
  );
  return { root: (menu?.data.root ?? null) as MenuCategory | null, soldOut };
}

const categoriesOf = (root: MenuCategory | null): { category: MenuCategory; products: MenuProduct[] }[] => {
  if (!root) return [];
  const out: { category: MenuCategory; products: MenuProduct[] }[] = [];
  const walk = (cat: MenuCategory) => {
    const products = cat.items.filter((i): i is MenuProduct => i.kind === 'svc/product');
    if (products.length > 0) out.push({ category: cat, products });
    for (const i of cat.items) if (i.kind === 'svc/group/category') walk(i);
  };
  walk(root);
  return out;
};

/** The venue's menu by category, each product a button that adds it to the basket; a sold-out one cannot be. */
export function MenuPicker(props: { root: MenuCategory | null; soldOut: Set<string>; add: (p: MenuProduct) => void }) {
  const { root, soldOut, add } = props;
  return (
    <section class="card" aria-labelledby="callcentre-menu-h">
      <h3 id="callcentre-menu-h">{t('orders.menu')}</h3>
      {!root && <p class="muted">{t('orders.noMenu')}</p>}
      {categoriesOf(root).map(({ category, products }) => (
        <div key={category.id} class="orders-menu-cat">
          <h4>{category.details.literals.name ?? category.id}</h4>
          <ul class="orders-menu">
            {products.map((p) => {
              const out = soldOut.has(p.id);
              return (
                <li key={p.id}>
                  <button
                    type="button"
                    class={`btn orders-product ${out ? 'sold-out' : ''}`}
                    data-testid={`menu-${p.id}`}
                    disabled={out}
                    onClick={() => add(p)}
                  >
                    <span>{p.details.literals.name ?? p.id}</span>
                    <span class="price">{out ? t('orders.soldOut') : money(p.price)}</span>
                  </button>
                </li>
              );
            })}
          </ul>
        </div>
      ))}
    </section>
  );
}
