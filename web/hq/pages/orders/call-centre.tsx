import { useState } from 'preact/hooks';
import type { HqOrderBody } from '../../../../src/shared/hq-inbox.js';
import { navigate } from '../../../router.js';
import { hq } from '../../api.js';
import { type Catalogue, liveOf, useCatalogue, venuesOf } from '../../data.js';
import { errorText, Field, FormError, inputValue, useApiForm } from '../../form.js';
import { dateTime, money, t } from '../../i18n.js';
import { useVenueName, VenuePicker } from '../../pickers.js';
import { type Column, DataTable } from '../../table.js';
import { ReadOnlyNote } from '../../ui.js';
import { EntryBadge, useEntries, useEntryWatch } from './entries.js';
import { orderLink } from './search.js';
import { codesText, type InboxEntry, ORDER_TYPES } from './types.js';

/** The interface's menu tree as GET /hq-api/api/catalogue gives it (src/shared/catalogue-schemas.ts: MenuNode). */
interface MenuProduct {
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
function venueMenu(c: Catalogue | null, venueId: string) {
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

interface BasketLine {
  productId: string;
  name: string;
  price: string;
  /** As typed: the central checks it (1..999, whole), its refusal is shown by the line. */
  quantity: string;
}

const newId = () => crypto.randomUUID();

/**
 * The call centre: an order taken at headquarters for one venue (POST /hq-api/api/orders, docs/sync.md "Orders
 * created at the central"). The order's id is made here once and kept until the order is accepted, so sending
 * again after a lost answer is the same order (the central answers 200 with the same entry). The box prices it
 * and checks hours and sold-out flags: the total shown is the menu's, what counts is the box's.
 */
export function CallCentre() {
  const catalogue = useCatalogue();
  const venues = venuesOf(catalogue);
  const canWrite = hq.canWrite();
  const form = useApiForm();
  const [venueId, setVenueId] = useState('');
  const venue = venueId || venues[0]?.id || '';
  const [orderType, setOrderType] = useState<(typeof ORDER_TYPES)[number]>('TAKE_AWAY');
  const [contact, setContact] = useState({ name: '', phone: '', email: '' });
  const [basket, setBasket] = useState<BasketLine[]>([]);
  const [orderId, setOrderId] = useState(newId);
  const [emptyBasket, setEmptyBasket] = useState(false);
  const [sent, setSent] = useState<InboxEntry | null>(null);
  const watch = useEntryWatch(sent);
  const { root, soldOut } = venueMenu(catalogue, venue);

  const add = (p: MenuProduct) => {
    setEmptyBasket(false);
    setBasket((b) => {
      const at = b.findIndex((l) => l.productId === p.id);
      if (at < 0)
        return [...b, { productId: p.id, name: p.details.literals.name ?? p.id, price: p.price, quantity: '1' }];
      return b.map((l, i) => (i === at ? { ...l, quantity: String((Number(l.quantity) || 0) + 1) } : l));
    });
  };
  const total = basket.reduce((s, l) => s + Number(l.price) * (Number(l.quantity) || 0), 0).toFixed(2);

  const submit = () => {
    // The central takes an order with no lines (a basket to fill later); a call centre's order without one is a
    // slip of the hand, so it is not sent.
    if (basket.length === 0) {
      setEmptyBasket(true);
      return;
    }
    const c = Object.fromEntries(Object.entries(contact).filter(([, v]) => v.trim() !== '')) as HqOrderBody['contact'];
    const body: HqOrderBody = {
      id: orderId,
      orderType,
      buckets: [{ venue, lines: basket.map((l) => ({ productId: l.productId, quantity: Number(l.quantity) })) }],
      ...(c && Object.keys(c).length > 0 ? { contact: c } : {}),
    };
    void form.run(async () => {
      const entry = await hq.send<InboxEntry>('POST', '/orders', body);
      setSent(entry);
      setBasket([]);
      setContact({ name: '', phone: '', email: '' });
      setOrderId(newId());
    });
  };

  const contactField = (k: keyof typeof contact, type: 'text' | 'tel' | 'email', autocomplete: string) => (
    <Field label={t(`orders.contact.${k}`)} error={form.fieldError(`/contact/${k}`)}>
      {(a) => (
        <input
          {...a}
          // One of text/tel/email (preact's input types are a union that does not take a variable of them).
          type={type as 'text'}
          name={`contact-${k}`}
          autocomplete={autocomplete}
          data-testid={`contact-${k}`}
          value={contact[k]}
          onInput={(e) => setContact({ ...contact, [k]: inputValue(e) })}
        />
      )}
    </Field>
  );

  return (
    <>
      <section aria-labelledby="callcentre-h">
        <h2 id="callcentre-h">{t('orders.newOrder')}</h2>
        {!canWrite && <ReadOnlyNote />}
        <form
          data-testid="callcentre-form"
          onSubmit={(e) => {
            e.preventDefault();
            submit();
          }}
        >
          <fieldset class="plain" disabled={!canWrite || form.busy}>
            <legend class="sr-only">{t('orders.newOrder')}</legend>
            <FormError form={form} />
            <div class="card form-grid">
              <Field label={t('app.venue')} error={form.fieldError('/buckets/0/venue') ?? form.fieldError('/buckets')}>
                {(a) => (
                  <VenuePicker
                    id={a.id}
                    value={venue}
                    onChange={(v) => {
                      setVenueId(v);
                      setBasket([]);
                    }}
                  />
                )}
              </Field>
              <Field label={t('orders.col.type')} error={form.fieldError('/orderType')}>
                {(a) => (
                  <select
                    {...a}
                    name="orderType"
                    data-testid="order-type"
                    value={orderType}
                    onChange={(e) => setOrderType(inputValue(e) as typeof orderType)}
                  >
                    {ORDER_TYPES.map((o) => (
                      <option key={o} value={o}>
                        {t(`orders.type.${o}`)}
                      </option>
                    ))}
                  </select>
                )}
              </Field>
              {contactField('name', 'text', 'name')}
              {contactField('phone', 'tel', 'tel')}
              {contactField('email', 'email', 'email')}
            </div>
            <div class="orders-take">
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
              <section class="card" aria-labelledby="callcentre-basket-h">
                <h3 id="callcentre-basket-h">{t('orders.basket')}</h3>
                {form.fieldError('/buckets/0/lines') && (
                  <p class="field-error" data-testid="field-error">
                    {form.fieldError('/buckets/0/lines')}
                  </p>
                )}
                {basket.length === 0 && (
                  <p
                    class={emptyBasket ? 'field-error' : 'muted'}
                    data-testid={emptyBasket ? 'field-error' : undefined}
                  >
                    {t('orders.basketEmpty')}
                  </p>
                )}
                <ul class="orders-basket" data-testid="basket">
                  {basket.map((l, i) => (
                    <li key={l.productId}>
                      <Field
                        label={`${l.name} (${money(l.price)})`}
                        error={
                          form.fieldError(`/buckets/0/lines/${i}/quantity`) ??
                          form.fieldError(`/buckets/0/lines/${i}/productId`) ??
                          form.fieldError(`/buckets/0/lines/${i}`)
                        }
                      >
                        {(a) => (
                          <input
                            {...a}
                            type="number"
                            inputMode="numeric"
                            class="qty"
                            data-testid={`qty-${l.productId}`}
                            value={l.quantity}
                            onInput={(e) => {
                              const q = inputValue(e);
                              setBasket((b) => b.map((x, j) => (j === i ? { ...x, quantity: q } : x)));
                            }}
                          />
                        )}
                      </Field>
                      <button
                        type="button"
                        class="btn small"
                        aria-label={t('orders.removeLine', { name: l.name })}
                        onClick={() => setBasket((b) => b.filter((_, j) => j !== i))}
                      >
                        {t('app.remove')}
                      </button>
                    </li>
                  ))}
                </ul>
                <p class="orders-total">
                  {t('orders.col.total')}: <strong data-testid="basket-total">{money(total)}</strong>
                </p>
                <p class="muted small">{t('orders.priceNote')}</p>
                <button type="submit" class="btn primary" data-testid="callcentre-submit">
                  {t('orders.send')}
                </button>
              </section>
            </div>
          </fieldset>
        </form>
        {watch.entry && <SentOrder entry={watch.entry} arrived={watch.orderArrived} />}
      </section>
      <RecentCentralOrders lastSent={sent?.id} />
    </>
  );
}

/** What became of the order just sent. */
function SentOrder(props: { entry: InboxEntry; arrived: boolean }) {
  const { entry } = props;
  return (
    <div class="card" role="status" aria-live="polite" data-testid="sent-order">
      <p>
        {t('orders.sentAs', { id: entry.id.slice(0, 8) })} <EntryBadge entry={entry} />
      </p>
      {entry.status === 'rejected' && (
        <ul class="orders-codes" data-testid="sent-codes">
          {entry.codes.map((c, i) => (
            <li key={i}>
              <code>{c.code}</code> {c.message}
            </li>
          ))}
        </ul>
      )}
      {entry.status === 'applied' && !props.arrived && <p class="muted">{t('orders.waitingCopy')}</p>}
      {props.arrived && (
        <a
          href={orderLink(entry.id)}
          data-testid="sent-order-link"
          onClick={(e) => {
            e.preventDefault();
            navigate(orderLink(entry.id));
          }}
        >
          {t('orders.openOrder')}
        </a>
      )}
    </div>
  );
}

/** Headquarters' recent orders (GET /hq-api/api/inbox, kind order) and what each box made of them. */
function RecentCentralOrders(props: { lastSent?: string }) {
  const venueName = useVenueName();
  const [venueId, setVenueId] = useState('');
  const { items, error } = useEntries('order', venueId, props.lastSent);
  const body = (e: InboxEntry) => e.body as Partial<HqOrderBody>;
  const columns: Column<InboxEntry>[] = [
    { label: t('orders.col.created'), cell: (e) => dateTime(e.createdAt), csv: (e) => e.createdAt },
    { label: t('orders.col.venue'), cell: (e) => venueName(e.venue), csv: (e) => e.venue },
    {
      label: t('orders.col.contact'),
      cell: (e) => [body(e).contact?.name, body(e).contact?.phone].filter(Boolean).join(', '),
    },
    {
      label: t('orders.lines'),
      cell: (e) => (body(e).buckets?.[0]?.lines ?? []).reduce((s, l) => s + l.quantity, 0),
      numeric: true,
    },
    { label: t('orders.entryState'), cell: (e) => <EntryBadge entry={e} />, csv: (e) => e.status },
    { label: t('orders.codes'), cell: (e) => codesText(e.codes) },
    {
      label: t('orders.col.id'),
      cell: (e) => (
        <a
          href={orderLink(e.id)}
          class="mono"
          onClick={(ev) => {
            ev.preventDefault();
            navigate(orderLink(e.id));
          }}
        >
          {e.id.slice(0, 8)}
        </a>
      ),
      csv: (e) => e.id,
    },
  ];
  return (
    <section aria-labelledby="recent-h">
      <div class="row spread">
        <h2 id="recent-h">{t('orders.recent')}</h2>
        <VenuePicker all value={venueId} onChange={setVenueId} />
      </div>
      {error !== null && (
        <p class="load-error" role="alert">
          {errorText(error)}
        </p>
      )}
      {items === null ? (
        <p class="muted">{t('app.loading')}</p>
      ) : (
        <DataTable
          columns={columns}
          rows={items}
          csvName="zamowienia-centrali"
          caption={t('orders.recentTable')}
          rowKey={(e) => e.id}
          testid="recent-orders"
        />
      )}
    </section>
  );
}
