import type { ComponentChildren } from 'preact';
import { Chart, type ChartSeries } from '../../chart.js';
import { duration, money, number, t } from '../../i18n.js';
import { type Column, DataTable } from '../../table.js';
import { Kpi } from '../../ui.js';
import type { Channels, Filters, Kitchen, Products, Sales, SalesRow } from './index.js';

const range = (f: Filters) => `${f.from}_${f.to}${f.venueId ? `_${f.venueId.slice(0, 8)}` : ''}`;

/** Hour bars are drawn for every hour of a range up to this many days; longer, only the hours with sales. */
const MAX_HOUR_FILL_DAYS = 14;

/**
 * The chart's periods: every day (or hour) from `from` to `to`, so a day without sales is a gap at zero and not
 * left out; plus any period the rows hold (they are the venues' local dates, as `from`/`to` are).
 */
export function periodsOf(sales: Pick<Sales, 'from' | 'to' | 'by' | 'rows'>): string[] {
  const all = new Set(sales.rows.map((r) => r.period));
  const start = Date.parse(`${sales.from}T00:00:00Z`);
  const end = Date.parse(`${sales.to}T00:00:00Z`);
  const days = (end - start) / 86_400_000 + 1;
  if (Number.isFinite(days) && days > 0 && days <= 366 && (sales.by === 'day' || days <= MAX_HOUR_FILL_DAYS)) {
    for (let d = 0; d < days; d++) {
      const day = new Date(start + d * 86_400_000).toISOString().slice(0, 10);
      if (sales.by === 'day') all.add(day);
      else for (let h = 0; h < 24; h++) all.add(`${day}T${String(h).padStart(2, '0')}`);
    }
  }
  return [...all].sort();
}

/** "2026-11-27" -> "27.11", "2026-11-27T14" -> "27.11 14:00": short labels under a chart's bars. */
export function periodLabel(period: string): string {
  const m = /^\d{4}-(\d{2})-(\d{2})(?:T(\d{2}))?$/.exec(period);
  if (!m) return period;
  return m[3] === undefined ? `${m[2]}.${m[1]}` : `${m[2]}.${m[1]} ${m[3]}:00`;
}

function Section(props: { id: string; title: string; children: ComponentChildren }) {
  return (
    <section
      class="card reports-section"
      aria-labelledby={`reports-${props.id}-title`}
      data-testid={`reports-${props.id}`}
    >
      <h2 id={`reports-${props.id}-title`}>{props.title}</h2>
      {props.children}
    </section>
  );
}

export function SalesReport({ sales, filters }: { sales: Sales; filters: Filters }) {
  const periods = periodsOf(sales);
  // One series: the shell's bars of several series overlap, and the table below has each venue's figures.
  const revenueAt = (period: string) =>
    sales.rows.filter((r) => r.period === period).reduce((minor, r) => minor + Math.round(Number(r.revenue) * 100), 0) /
    100;
  const series: ChartSeries[] = [
    {
      label: filters.venueId ? (sales.rows[0]?.venueName ?? t('reports.revenue')) : t('reports.allVenues'),
      values: periods.map(revenueAt),
      format: moneyOf,
    },
  ];
  const columns: Column<SalesRow>[] = [
    // The table reads "2026-11-27 14:00"; the CSV keeps the API's period ("2026-11-27T14").
    { label: t('reports.period'), cell: (r) => r.period.replace(/T(\d{2})$/, ' $1:00'), csv: (r) => r.period },
    { label: t('reports.venue'), cell: (r) => r.venueName },
    { label: t('reports.orders'), numeric: true, cell: (r) => number(r.orders), csv: (r) => r.orders },
    { label: t('reports.revenue'), numeric: true, cell: (r) => money(r.revenue), csv: (r) => r.revenue },
    { label: t('reports.ticket'), numeric: true, cell: (r) => money(r.averageTicket), csv: (r) => r.averageTicket },
  ];
  const by = t(sales.by === 'hour' ? 'reports.salesChartHour' : 'reports.salesChartDay');
  return (
    <Section id="sales" title={t('reports.sales')}>
      <div class="kpis">
        <Kpi label={t('reports.totalOrders')} value={number(sales.totals.orders)} testid="reports-total-orders" />
        <Kpi label={t('reports.totalRevenue')} value={money(sales.totals.revenue)} testid="reports-total-revenue" />
        <Kpi label={t('reports.totalTicket')} value={money(sales.totals.averageTicket)} testid="reports-total-ticket" />
      </div>
      <Chart
        title={t('reports.salesChart', { by })}
        labels={periods.map(periodLabel)}
        series={series}
        testid="reports-sales-chart"
      />
      <DataTable
        columns={columns}
        rows={sales.rows}
        csvName={`sales-${sales.by}-${range(filters)}`}
        caption={t('reports.salesTable')}
        rowKey={(r) => `${r.period}|${r.venueId}`}
        testid="reports-sales-table"
      />
    </Section>
  );
}

const moneyOf = (v: number) => money(v.toFixed(2));

export function ProductsReport({ products, filters }: { products: Products; filters: Filters }) {
  type Row = Products['rows'][number];
  const columns: Column<Row>[] = [
    { label: t('reports.product'), cell: (r) => r.name },
    { label: t('reports.quantity'), numeric: true, cell: (r) => number(r.quantity), csv: (r) => r.quantity },
    { label: t('reports.revenue'), numeric: true, cell: (r) => money(r.revenue), csv: (r) => r.revenue },
  ];
  return (
    <Section id="products" title={t('reports.products')}>
      <Chart
        title={t('reports.productsChart')}
        labels={products.rows.map((r) => r.name)}
        series={[{ label: t('reports.revenue'), values: products.rows.map((r) => Number(r.revenue)), format: moneyOf }]}
        testid="reports-products-chart"
      />
      <DataTable
        columns={columns}
        rows={products.rows}
        csvName={`products-${range(filters)}`}
        caption={t('reports.productsTable')}
        rowKey={(r) => r.productId}
        testid="reports-products-table"
      />
    </Section>
  );
}

const channelName = (orderType: string) => {
  const key = `reports.type.${orderType}`;
  const name = t(key);
  return name === key ? orderType : name;
};

export function ChannelsReport({ channels, filters }: { channels: Channels; filters: Filters }) {
  type Row = Channels['rows'][number];
  const columns: Column<Row>[] = [
    { label: t('reports.channel'), cell: (r) => channelName(r.orderType), csv: (r) => r.orderType },
    { label: t('reports.orders'), numeric: true, cell: (r) => number(r.orders), csv: (r) => r.orders },
    { label: t('reports.revenue'), numeric: true, cell: (r) => money(r.revenue), csv: (r) => r.revenue },
    { label: t('reports.ticket'), numeric: true, cell: (r) => money(r.averageTicket), csv: (r) => r.averageTicket },
  ];
  return (
    <Section id="channels" title={t('reports.channels')}>
      <Chart
        title={t('reports.channelsChart')}
        labels={channels.rows.map((r) => channelName(r.orderType))}
        series={[{ label: t('reports.orders'), values: channels.rows.map((r) => r.orders) }]}
        testid="reports-channels-chart"
        counts
      />
      <DataTable
        columns={columns}
        rows={channels.rows}
        csvName={`channels-${range(filters)}`}
        caption={t('reports.channelsTable')}
        rowKey={(r) => r.orderType}
        testid="reports-channels-table"
      />
    </Section>
  );
}

export function KitchenReport({ kitchen, filters }: { kitchen: Kitchen; filters: Filters }) {
  type Row = Kitchen['rows'][number];
  const columns: Column<Row>[] = [
    { label: t('reports.venue'), cell: (r) => r.venueName },
    { label: t('reports.kitchenOrders'), numeric: true, cell: (r) => number(r.orders), csv: (r) => r.orders },
    {
      label: t('reports.average'),
      numeric: true,
      cell: (r) => duration(r.averageSeconds),
      csv: (r) => r.averageSeconds,
    },
    { label: t('reports.max'), numeric: true, cell: (r) => duration(r.maxSeconds), csv: (r) => r.maxSeconds },
  ];
  return (
    <Section id="kitchen" title={t('reports.kitchen')}>
      <Chart
        title={t('reports.kitchenChart')}
        labels={kitchen.rows.map((r) => r.venueName)}
        series={[
          {
            label: t('reports.minutes'),
            values: kitchen.rows.map((r) => Math.round(r.averageSeconds / 6) / 10),
            format: (v) => number(v, 1),
          },
        ]}
        testid="reports-kitchen-chart"
      />
      <DataTable
        columns={columns}
        rows={kitchen.rows}
        csvName={`kitchen-${range(filters)}`}
        caption={t('reports.kitchenTable')}
        rowKey={(r) => r.venueId}
        testid="reports-kitchen-table"
      />
    </Section>
  );
}
