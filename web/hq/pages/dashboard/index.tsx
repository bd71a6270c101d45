import type { Static } from '@sinclair/typebox';
import { navigate } from '../../../router.js';
import { hq } from '../../api.js';
import { Chart } from '../../chart.js';
import { ago, dateTime, duration, money, number, t, useLanguage } from '../../i18n.js';
import { useVenueName } from '../../pickers.js';
import { type Column, DataTable } from '../../table.js';
import type { Dashboard as DashboardSchema } from '../../../../src/central/modules/reports/schemas.js';
import { Kpi, Loaded, useEvery, useLoad } from '../../ui.js';

/** GET /hq-api/api/dashboard (docs/console.md "Pages"): the central's own schema's type, never a copy of it. */
export type Dashboard = Static<typeof DashboardSchema>;
export type Summary = Dashboard['venues'][number]['today'];

/** How often the open page reads the dashboard again (the fleet's state moves by the minute). */
const REFRESH_MS = 30_000;

/** Sums the API's money strings ("12.50") in minor units, so no float error creeps into a total. */
export function sumMoney(values: string[]): string {
  const minor = values.reduce((sum, v) => sum + Math.round(Number(v) * 100), 0);
  return (minor / 100).toFixed(2);
}

/** The dashboard page (docs/console.md "Pages"): today's and this week's sales per venue, and the fleet's alerts. */
export function DashboardPage() {
  useLanguage();
  const state = useLoad(() => hq.get<Dashboard>('/dashboard'));
  useEvery(REFRESH_MS, state.reload);
  return (
    <div class="dashboard pad">
      <div class="row spread">
        <h1>{t('nav.dashboard')}</h1>
        <div class="row">
          {state.value && (
            <span class="muted" data-testid="dashboard-generated">
              {t('dashboard.generatedAt', { time: dateTime(state.value.generatedAt) })}
            </span>
          )}
          <button type="button" class="btn" data-testid="dashboard-refresh" onClick={state.reload}>
            {t('dashboard.refresh')}
          </button>
        </div>
      </div>
      <Loaded state={state}>{(d) => <DashboardView d={d} />}</Loaded>
    </div>
  );
}

function DashboardView({ d }: { d: Dashboard }) {
  const todayOrders = d.venues.reduce((n, v) => n + v.today.orders, 0);
  const todayRevenue = sumMoney(d.venues.map((v) => v.today.revenue));
  const weekOrders = d.venues.reduce((n, v) => n + v.week.orders, 0);
  const weekRevenue = sumMoney(d.venues.map((v) => v.week.revenue));
  const todayTicket = todayOrders > 0 ? (Number(todayRevenue) / todayOrders).toFixed(2) : null;
  return (
    <>
      <section class="card" aria-labelledby="dashboard-sales">
        <h2 id="dashboard-sales">{t('dashboard.sales')}</h2>
        <div class="kpis">
          <Kpi label={t('dashboard.todayOrders')} value={number(todayOrders)} testid="dashboard-today-orders" />
          <Kpi label={t('dashboard.todayRevenue')} value={money(todayRevenue)} testid="dashboard-today-revenue" />
          <Kpi label={t('dashboard.todayTicket')} value={money(todayTicket)} testid="dashboard-today-ticket" />
          <Kpi label={t('dashboard.weekOrders')} value={number(weekOrders)} testid="dashboard-week-orders" />
          <Kpi label={t('dashboard.weekRevenue')} value={money(weekRevenue)} testid="dashboard-week-revenue" />
        </div>
        <VenueTable d={d} />
        <Chart
          title={t('dashboard.perHour')}
          testid="dashboard-per-hour"
          labels={d.ordersPerHour.map((h) => String(h.hour).padStart(2, '0'))}
          series={[{ label: t('dashboard.orders'), values: d.ordersPerHour.map((h) => h.orders) }]}
          height={200}
          counts
        />
      </section>
      <FleetGlance fleet={d.fleet} />
    </>
  );
}

type VenueRow = Dashboard['venues'][number];

function VenueTable({ d }: { d: Dashboard }) {
  const today = t('dashboard.today');
  const week = t('dashboard.week');
  const summary = (label: string, of: (r: VenueRow) => Summary): Column<VenueRow>[] => [
    {
      label: `${t('dashboard.orders')}, ${label}`,
      numeric: true,
      cell: (r) => number(of(r).orders),
      csv: (r) => of(r).orders,
    },
    {
      label: `${t('dashboard.revenue')}, ${label}`,
      numeric: true,
      cell: (r) => money(of(r).revenue),
      csv: (r) => of(r).revenue,
    },
    {
      label: `${t('dashboard.ticket')}, ${label}`,
      numeric: true,
      cell: (r) => money(of(r).averageTicket),
      csv: (r) => of(r).averageTicket,
    },
    {
      label: `${t('dashboard.kitchen')}, ${label}`,
      numeric: true,
      cell: (r) => duration(of(r).kitchenAverageSeconds),
      csv: (r) => of(r).kitchenAverageSeconds,
    },
  ];
  const columns: Column<VenueRow>[] = [
    {
      label: t('dashboard.venue'),
      cell: (r) => <span data-venue={r.venueId}>{r.venueName}</span>,
      csv: (r) => r.venueName,
    },
    ...summary(today, (r) => r.today),
    ...summary(week, (r) => r.week),
  ];
  return (
    <DataTable
      columns={columns}
      rows={d.venues}
      csvName={`dashboard-${d.today}`}
      caption={t('dashboard.salesCaption', { today: d.today, week: d.weekFrom })}
      rowKey={(r) => r.venueId}
      testid="dashboard-venues"
    />
  );
}

/** The fleet's counts and one alert per problem, each a link to the device on the fleet page. */
function FleetGlance({ fleet }: { fleet: Dashboard['fleet'] }) {
  const venueName = useVenueName();
  const who = (r: Pick<Dashboard['fleet']['offline'][number], 'deviceId' | 'name' | 'venueId'>) => ({
    name: r.name ?? r.deviceId.slice(0, 8),
    venue: venueName(r.venueId),
  });
  const alerts = [
    ...fleet.offline.map((r) => ({
      key: `offline-${r.deviceId}`,
      kind: 'bad',
      deviceId: r.deviceId,
      text: r.lastContactAt
        ? t('dashboard.alertOffline', { ...who(r), ago: ago(r.lastContactAt) })
        : t('dashboard.alertNeverSeen', who(r)),
    })),
    ...fleet.rolledBack.map((r) => ({
      key: `rolledBack-${r.deviceId}`,
      kind: 'bad',
      deviceId: r.deviceId,
      text: t('dashboard.alertRolledBack', { ...who(r), version: r.version, reason: r.reason ?? '–' }),
    })),
    ...fleet.deadLetters.map((r) => ({
      key: `dead-${r.deviceId}`,
      kind: 'bad',
      deviceId: r.deviceId,
      text: t('dashboard.alertDead', { ...who(r), count: r.count }),
    })),
    ...fleet.lagging.map((r) => ({
      key: `lagging-${r.deviceId}`,
      kind: 'warn',
      deviceId: r.deviceId,
      text: t('dashboard.alertLagging', { ...who(r), count: r.lagEvents, ago: ago(r.oldestPendingAt) }),
    })),
  ];
  return (
    <section class="card" aria-labelledby="dashboard-fleet">
      <h2 id="dashboard-fleet">{t('dashboard.fleet')}</h2>
      <div class="kpis">
        <Kpi label={t('dashboard.devices')} value={number(fleet.devices)} testid="dashboard-devices" />
        <Kpi label={t('dashboard.online')} value={number(fleet.online)} testid="dashboard-online" />
        <Kpi label={t('dashboard.offline')} value={number(fleet.offline.length)} testid="dashboard-offline" />
        <Kpi label={t('dashboard.lagging')} value={number(fleet.lagging.length)} testid="dashboard-lagging" />
        <Kpi
          label={t('dashboard.deadLetters')}
          value={number(fleet.deadLetters.reduce((n, r) => n + r.count, 0))}
          testid="dashboard-dead-letters"
        />
        <Kpi label={t('dashboard.rolledBack')} value={number(fleet.rolledBack.length)} testid="dashboard-rolled-back" />
      </div>
      {alerts.length === 0 ? (
        <p class="muted" data-testid="dashboard-all-good">
          {t('dashboard.allGood')}
        </p>
      ) : (
        <ul class="dashboard-alerts" aria-label={t('dashboard.alerts')} data-testid="dashboard-alerts">
          {alerts.map((a) => {
            const href = `/fleet?id=${encodeURIComponent(a.deviceId)}`;
            return (
              <li key={a.key} class={`alert ${a.kind === 'warn' ? 'warn' : ''}`}>
                <a
                  href={href}
                  data-testid="dashboard-alert"
                  onClick={(e) => {
                    e.preventDefault();
                    navigate(href);
                  }}
                >
                  {a.text}
                </a>
              </li>
            );
          })}
        </ul>
      )}
    </section>
  );
}
