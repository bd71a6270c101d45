import { navigate, route } from '../../../router.js';
import { useStore } from '../../../store.js';
import { hq } from '../../api.js';
import { ago, number, t, useLanguage } from '../../i18n.js';
import { useVenueName } from '../../pickers.js';
import { type Column, DataTable } from '../../table.js';
import { Loaded, useEvery, useLoad } from '../../ui.js';
import { DeviceDetails } from './device.js';
import { contactText, type Device, deviceName, isOnline, offsetText, StateBadge, updateText } from './model.js';
import { EnrolForm } from './enrol.js';

/** The list is read again this often while the page is open, so a box enrolled just now shows up. */
const REFRESH_MS = 5000;

/** The fleet page (docs/console.md "Pages"): every box, one box's details at `/fleet?id=`, enrolling and revoking. */
export function FleetPage() {
  useLanguage();
  const { query } = useStore(route);
  const selected = query.get('id');
  const state = useLoad(() => hq.get<Device[]>('/devices'));
  useEvery(REFRESH_MS, state.reload);
  return (
    <div class="fleet pad">
      <h1>{t('nav.fleet')}</h1>
      <Loaded state={state}>
        {(devices) => (
          <>
            {selected && (
              <DeviceDetails device={devices.find((d) => d.id === selected)} id={selected} onChanged={state.reload} />
            )}
            <DeviceTable devices={devices} selected={selected} onReload={state.reload} />
          </>
        )}
      </Loaded>
      <EnrolForm onEnrolCode={state.reload} />
    </div>
  );
}

function DeviceTable(props: { devices: Device[]; selected: string | null; onReload: () => void }) {
  const venueName = useVenueName();
  const venueOf = (d: Device) => d.venueName ?? venueName(d.venue);
  const columns: Column<Device>[] = [
    {
      label: t('fleet.name'),
      cell: (d) => (
        <a
          href={`/fleet?id=${encodeURIComponent(d.id)}`}
          data-testid="fleet-device"
          data-device={d.id}
          aria-current={props.selected === d.id ? 'true' : undefined}
          onClick={(e) => {
            e.preventDefault();
            e.stopPropagation();
            navigate(`/fleet?id=${encodeURIComponent(d.id)}`);
          }}
        >
          {deviceName(d)}
        </a>
      ),
      csv: (d) => d.name ?? d.id,
    },
    { label: t('fleet.venue'), cell: venueOf },
    {
      label: t('fleet.state'),
      cell: (d) => <StateBadge d={d} />,
      csv: (d) => (d.status === 'revoked' ? 'revoked' : isOnline(d) ? 'online' : 'offline'),
    },
    { label: t('fleet.version'), cell: (d) => d.version ?? '–', csv: (d) => d.version ?? null },
    { label: t('fleet.update'), cell: updateText, csv: (d) => d.update?.state ?? null },
    { label: t('fleet.lastContact'), cell: (d) => contactText(d.lastContactAt), csv: (d) => d.lastContactAt },
    { label: t('fleet.lag'), numeric: true, cell: (d) => number(d.lagEvents), csv: (d) => d.lagEvents },
    {
      label: t('fleet.oldestPending'),
      cell: (d) => (d.oldestPendingAt ? t('fleet.ago', { ago: ago(d.oldestPendingAt) }) : '–'),
      csv: (d) => d.oldestPendingAt ?? null,
    },
    {
      label: t('fleet.clockOffset'),
      numeric: true,
      cell: (d) => offsetText(d.clockOffsetMs),
      csv: (d) => d.clockOffsetMs,
    },
    { label: t('fleet.deadLetters'), numeric: true, cell: (d) => number(d.deadLetters), csv: (d) => d.deadLetters },
    {
      label: t('fleet.catalogueRev'),
      numeric: true,
      cell: (d) => number(d.catalogueRev ?? null),
      csv: (d) => d.catalogueRev ?? null,
    },
  ];
  return (
    <section class="card" aria-labelledby="fleet-list">
      <div class="row spread">
        <h2 id="fleet-list">{t('fleet.devices')}</h2>
        <button type="button" class="btn" data-testid="fleet-refresh" onClick={props.onReload}>
          {t('fleet.refresh')}
        </button>
      </div>
      <DataTable
        columns={columns}
        rows={props.devices}
        csvName="devices"
        rowKey={(d) => d.id}
        onRow={(d) => navigate(`/fleet?id=${encodeURIComponent(d.id)}`)}
        testid="fleet-table"
      />
    </section>
  );
}
