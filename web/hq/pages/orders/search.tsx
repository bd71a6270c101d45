import { useEffect, useState } from 'preact/hooks';
import { navigate, route } from '../../../router.js';
import { hq, withQuery } from '../../api.js';
import { Field, FormError, inputValue, useApiForm } from '../../form.js';
import { dateTime, money, t } from '../../i18n.js';
import { useVenueName, VenuePicker } from '../../pickers.js';
import { type Column, DataTable } from '../../table.js';
import { ORDER_STATUSES, type HqOrder, type OrdersPage } from './types.js';

/** The search's filters: the query parameters of GET /hq-api/api/orders (docs/sync.md "HQ reports and order search"), '' for "any". */
export interface OrderFilters {
  venueId: string;
  status: string;
  from: string;
  to: string;
  source: string;
  q: string;
}
const NO_FILTERS: OrderFilters = { venueId: '', status: '', from: '', to: '', source: '', q: '' };
const FILTER_KEYS = Object.keys(NO_FILTERS) as (keyof OrderFilters)[];

/** The filters the address holds (`/orders?status=READY&q=anna`), so "back" from an order returns to its search. */
const filtersOf = (query: URLSearchParams): OrderFilters =>
  Object.fromEntries(FILTER_KEYS.map((k) => [k, query.get(k) ?? ''])) as unknown as OrderFilters;

export const contactText = (c: HqOrder['contact']): string =>
  c ? [c.name, c.phone, c.email].filter((x) => x !== undefined && x !== '').join(', ') : '';

export const orderLink = (id: string) => `/orders?id=${encodeURIComponent(id)}`;

/** An order's id as a link to its view (the row's keyboard way in; the row itself is clickable too). */
export function OrderLink(props: { id: string }) {
  return (
    <a
      href={orderLink(props.id)}
      class="mono"
      data-testid="order-link"
      onClick={(e) => {
        // The row opens the order too: one history entry, not two.
        e.preventDefault();
        e.stopPropagation();
        navigate(orderLink(props.id));
      }}
    >
      {props.id.slice(0, 8)}
    </a>
  );
}

export const StatusBadge = (props: { status: string }) => (
  <span class={`badge status-${props.status.toLowerCase()}`} data-testid="order-status">
    {t(`orders.status.${props.status}`)}
  </span>
);

/**
 * Orders across venues: the filters are sent as they are (the central checks them: a bad date or a `q` of one
 * letter comes back as its field's error), results newest first, "more" follows the page's cursor.
 */
export function OrderSearch() {
  const venueName = useVenueName();
  const form = useApiForm();
  const [filters, setFilters] = useState<OrderFilters>(() => filtersOf(route.value.query));
  const [result, setResult] = useState<{ items: HqOrder[]; next: string | null; filters: OrderFilters } | null>(null);
  const set = (k: keyof OrderFilters) => (e: Event) => setFilters({ ...filters, [k]: inputValue(e) });

  const search = (wanted: OrderFilters, after?: string) => {
    const sent = after && result ? result.filters : wanted;
    if (!after) history.replaceState(null, '', withQuery('/orders', { ...sent }));
    void form.run(async () => {
      const page = await hq.get<OrdersPage>('/orders', { ...sent, after, limit: 50 });
      setResult({
        items: after && result ? [...result.items, ...page.items] : page.items,
        next: page.next,
        filters: sent,
      });
    });
  };
  // The search the address names (the newest orders of every venue when it names none).
  useEffect(() => search(filters), []);

  const columns: Column<HqOrder>[] = [
    { label: t('orders.col.created'), cell: (o) => dateTime(o.created), csv: (o) => o.created },
    {
      label: t('orders.col.venue'),
      cell: (o) => o.buckets.map((b) => venueName(b.venue)).join(', '),
    },
    { label: t('orders.col.status'), cell: (o) => <StatusBadge status={o.status} />, csv: (o) => o.status },
    { label: t('orders.col.type'), cell: (o) => t(`orders.type.${o.orderType}`), csv: (o) => o.orderType },
    { label: t('orders.col.source'), cell: (o) => o.source },
    { label: t('orders.col.contact'), cell: (o) => contactText(o.contact) },
    { label: t('orders.col.total'), cell: (o) => money(o.total), csv: (o) => o.total, numeric: true },
    { label: t('orders.col.id'), cell: (o) => <OrderLink id={o.id} />, csv: (o) => o.id },
  ];

  return (
    <section aria-labelledby="orders-search-h">
      <h2 id="orders-search-h">{t('orders.search')}</h2>
      <form
        class="card"
        data-testid="orders-filters"
        onSubmit={(e) => {
          e.preventDefault();
          search(filters);
        }}
      >
        <FormError form={form} />
        <div class="form-grid">
          <Field label={t('app.venue')} error={form.fieldError('venueId')}>
            {(a) => (
              <VenuePicker
                input={a}
                all
                value={filters.venueId}
                onChange={(v) => setFilters({ ...filters, venueId: v })}
              />
            )}
          </Field>
          <Field label={t('orders.col.status')} error={form.fieldError('status')}>
            {(a) => (
              <select {...a} name="status" data-testid="filter-status" value={filters.status} onChange={set('status')}>
                <option value="">{t('orders.anyStatus')}</option>
                {ORDER_STATUSES.map((s) => (
                  <option key={s} value={s}>
                    {t(`orders.status.${s}`)}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field label={t('app.from')} error={form.fieldError('from')}>
            {(a) => <input {...a} type="date" name="from" value={filters.from} onInput={set('from')} />}
          </Field>
          <Field label={t('app.to')} error={form.fieldError('to')}>
            {(a) => <input {...a} type="date" name="to" value={filters.to} onInput={set('to')} />}
          </Field>
          <Field label={t('orders.col.source')} error={form.fieldError('source')} hint={t('orders.sourceHint')}>
            {(a) => <input {...a} name="source" value={filters.source} onInput={set('source')} />}
          </Field>
          <Field label={t('orders.q')} error={form.fieldError('q')} hint={t('orders.qHint')}>
            {(a) => <input {...a} type="search" name="q" data-testid="filter-q" value={filters.q} onInput={set('q')} />}
          </Field>
        </div>
        <div class="row">
          <button type="submit" class="btn primary" data-testid="orders-search" disabled={form.busy}>
            {t('app.search')}
          </button>
          <button
            type="button"
            class="btn"
            onClick={() => {
              setFilters(NO_FILTERS);
              search(NO_FILTERS);
            }}
          >
            {t('orders.clear')}
          </button>
        </div>
      </form>
      {result && (
        <>
          <p class="muted" aria-live="polite" data-testid="orders-count">
            {t(result.next ? 'orders.shownMore' : 'orders.shown', { n: result.items.length })}
          </p>
          <DataTable
            columns={columns}
            rows={result.items}
            csvName="zamowienia"
            caption={t('orders.results')}
            rowKey={(o) => o.id}
            onRow={(o) => navigate(orderLink(o.id))}
            testid="orders-table"
          />
          {result.next && (
            <button
              type="button"
              class="btn"
              data-testid="orders-more"
              disabled={form.busy}
              onClick={() => search(result.filters, result.next!)}
            >
              {t('app.more')}
            </button>
          )}
        </>
      )}
    </section>
  );
}
