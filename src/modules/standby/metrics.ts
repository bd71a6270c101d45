import { Gauge } from 'prom-client';
import { type BoxMetrics, gauge, perScrape } from '../health/metrics.js';
import type { StandbyStatus } from './status.js';

/**
 * The box's part in a pair, read at scrape time from its standby status (docs/operations.md "A standby box"). A
 * box never paired reports role `single`, state not synchronous and 0 lag: an alert on
 * `venue_box_standby_synchronous == 0` belongs on the paired boxes only (`venue_box_standby_role{role="primary"}`).
 */
export function registerStandbyGauges(m: BoxMetrics, read: () => StandbyStatus): void {
  const status = perScrape(read);
  new Gauge({
    name: 'venue_box_standby_role',
    help: "Always 1; the box's role in its label: primary, standby or single (never paired).",
    labelNames: ['role'],
    registers: [m.registry],
    collect() {
      // One series: a role that changed leaves no stale one (a takeover restarts the process anyway).
      this.reset();
      this.set({ role: status().role }, 1);
    },
  });
  const standbyGauge = (name: string, help: string, value: (s: StandbyStatus) => number) =>
    gauge(m, name, help, () => value(status()));
  standbyGauge(
    'venue_box_standby_term',
    "The pair's term: raised by one at each takeover (a box never follows a lower one).",
    (s) => s.term,
  );
  standbyGauge(
    'venue_box_standby_connected',
    '1 while the peer box is connected (the stream to the standby is up).',
    (s) => Number(s.connected),
  );
  standbyGauge(
    'venue_box_standby_synchronous',
    "1 while every confirmation waits for the standby's acknowledgement: each order is on both boxes.",
    (s) => Number(s.state === 'synchronous'),
  );
  standbyGauge(
    'venue_box_standby_lag_bytes',
    'WAL bytes sent to the standby and not yet acknowledged (0 on a box without one).',
    (s) => s.lagBytes,
  );
  standbyGauge(
    'venue_box_standby_lag_seconds',
    'Age of the oldest WAL byte not yet acknowledged by the standby (0: none).',
    (s) => s.lagSeconds,
  );
  standbyGauge(
    'venue_box_standby_replicated_bytes',
    'WAL bytes sent to the standby (on a primary) or received (on a standby) since the process started.',
    (s) => s.replicatedBytes,
  );
  standbyGauge(
    'venue_box_standby_stalls',
    'Confirmations that stopped waiting for the standby after standby.stallMs, since the process started.',
    (s) => s.stalls,
  );
  standbyGauge(
    'venue_box_standby_last_takeover_timestamp_seconds',
    'When this box last took over as the primary (0: never).',
    (s) => (s.lastTakeoverAt === null ? 0 : Date.parse(s.lastTakeoverAt) / 1000),
  );
}
