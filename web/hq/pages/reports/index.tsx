import type { Static } from '@sinclair/typebox';
import { useEffect, useRef, useState } from 'preact/hooks';
import { navigate, route } from '../../../router.js';
import { useStore } from '../../../store.js';
import { withQuery } from '../../api.js';
import { hq } from '../../api.js';
import { Field, FormError, inputValue, useApiForm } from '../../form.js';
import { t, useLanguage } from '../../i18n.js';
import { VenuePicker } from '../../pickers.js';
import type {
  ChannelsReport as ChannelsSchema,
  KitchenReport as KitchenSchema,
  ProductsReport as ProductsSchema,
  SalesReport as SalesSchema,
} from '../../../../src/central/modules/reports/schemas.js';
import { ChannelsReport, KitchenReport, ProductsReport, SalesReport } from './views.js';

/** GET /hq-api/api/reports/* (docs/console.md "Pages"): the central's own schemas' types, never copies of them. */
export type Sales = Static<typeof SalesSchema>;
export type SalesRow = Sales['rows'][number];
export type Products = Static<typeof ProductsSchema>;
export type Channels = Static<typeof ChannelsSchema>;
export type Kitchen = Static<typeof KitchenSchema>;
interface Reports {
  sales: Sales;
  products: Products;
  channels: Channels;
  kitchen: Kitchen;
}

/** A local date as the API takes it (`YYYY-MM-DD`). */
const ymd = (d: Date) =>
  `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;

/** The filters as the address holds them, with the defaults: the last 7 days (today included), all venues, by day. */
export function filtersOf(query: URLSearchParams) {
  const today = new Date();
  const weekAgo = new Date(today.getFullYear(), today.getMonth(), today.getDate() - 6);
  return {
    from: query.get('from') || ymd(weekAgo),
    to: query.get('to') || ymd(today),
    venueId: query.get('venueId') ?? '',
    by: query.get('by') === 'hour' ? ('hour' as const) : ('day' as const),
  };
}
export type Filters = ReturnType<typeof filtersOf>;

/**
 * The reports page (docs/console.md "Pages"): sales, products, channels and kitchen time over a range of the
 * venues' own dates. The filters live in the address (`/reports?from=...&to=...&venueId=...&by=hour`), so a
 * report can be bookmarked and sent.
 */
export function ReportsPage() {
  useLanguage();
  const { query } = useStore(route);
  const filters = filtersOf(query);
  const [draft, setDraft] = useState(filters);
  const [data, setData] = useState<Reports | null>(null);
  const form = useApiForm();
  const generation = useRef(0);
  const key = `${filters.from}|${filters.to}|${filters.venueId}|${filters.by}`;

  useEffect(() => {
    setDraft(filters);
    const mine = ++generation.current;
    const q = { from: filters.from, to: filters.to, venueId: filters.venueId || undefined };
    void form.run(async () => {
      const [sales, products, channels, kitchen] = await Promise.all([
        hq.get<Sales>('/reports/sales', { ...q, by: filters.by }),
        hq.get<Products>('/reports/products', q),
        hq.get<Channels>('/reports/channels', q),
        hq.get<Kitchen>('/reports/kitchen', q),
      ]);
      if (mine === generation.current) setData({ sales, products, channels, kitchen });
    });
  }, [key]);

  const apply = (next: Filters) => {
    const to = withQuery('/reports', { ...next, venueId: next.venueId || undefined });
    if (to !== `${location.pathname}${location.search}`) navigate(to);
  };
  const fieldError = (name: string) => form.fieldError(name) ?? form.fieldError(`/${name}`);

  return (
    <div class="reports pad">
      <h1>{t('nav.reports')}</h1>
      <form
        class="card reports-filters"
        aria-label={t('reports.filters')}
        data-testid="reports-filters"
        onSubmit={(e) => {
          e.preventDefault();
          apply(draft);
        }}
      >
        <FormError form={form} />
        <div class="row reports-filter-fields">
          <Field label={t('app.from')} error={fieldError('from')}>
            {(a) => (
              <input
                {...a}
                type="date"
                name="from"
                data-testid="reports-from"
                value={draft.from}
                onInput={(e) => setDraft({ ...draft, from: inputValue(e) })}
                onChange={(e) => apply({ ...draft, from: inputValue(e) })}
              />
            )}
          </Field>
          <Field label={t('app.to')} error={fieldError('to')}>
            {(a) => (
              <input
                {...a}
                type="date"
                name="to"
                data-testid="reports-to"
                value={draft.to}
                onInput={(e) => setDraft({ ...draft, to: inputValue(e) })}
                onChange={(e) => apply({ ...draft, to: inputValue(e) })}
              />
            )}
          </Field>
          <Field label={t('app.venue')} error={fieldError('venueId')}>
            {(a) => (
              <span class="reports-picker">
                <VenuePicker input={a} all value={draft.venueId} onChange={(venueId) => apply({ ...draft, venueId })} />
              </span>
            )}
          </Field>
          <Field label={t('reports.by')} error={fieldError('by')}>
            {(a) => (
              <select
                {...a}
                name="by"
                data-testid="reports-by"
                value={draft.by}
                onChange={(e) => apply({ ...draft, by: inputValue(e) === 'hour' ? 'hour' : 'day' })}
              >
                <option value="day">{t('reports.byDay')}</option>
                <option value="hour">{t('reports.byHour')}</option>
              </select>
            )}
          </Field>
          <button type="submit" class="btn primary" data-testid="reports-show" disabled={form.busy}>
            {t('reports.show')}
          </button>
          <button type="button" class="btn" data-testid="reports-last-week" onClick={() => navigate('/reports')}>
            {t('reports.lastWeek')}
          </button>
        </div>
      </form>
      {data === null ? (
        form.busy && <p class="muted">{t('app.loading')}</p>
      ) : (
        <div class={form.busy ? 'reports-body busy' : 'reports-body'} aria-busy={form.busy}>
          <SalesReport sales={data.sales} filters={filters} />
          <ProductsReport products={data.products} filters={filters} />
          <div class="grid wide">
            <ChannelsReport channels={data.channels} filters={filters} />
            <KitchenReport kitchen={data.kitchen} filters={filters} />
          </div>
        </div>
      )}
    </div>
  );
}
