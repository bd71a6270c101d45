import { useState } from 'preact/hooks';
import type { HqOrderBody } from '../../../../src/shared/hq-inbox.js';
import { navigate } from '../../../router.js';
import { dateTime, t } from '../../i18n.js';
import { useVenueName, VenuePicker } from '../../pickers.js';
import type { Column } from '../../table.js';
import { EntriesTable, EntryBadge } from './entries.js';
import { orderLink } from './search.js';
import { codesText, type InboxEntry } from './types.js';

/** What became of the order just sent. */
export function SentOrder(props: { entry: InboxEntry; arrived: boolean }) {
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
export function RecentCentralOrders(props: { lastSent?: string }) {
  const venueName = useVenueName();
  const [venueId, setVenueId] = useState('');
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
      <EntriesTable
        kind="order"
        venueId={venueId}
        lastSent={props.lastSent}
        columns={columns}
        csvName="zamowienia-centrali"
        caption={t('orders.recentTable')}
        testid="recent-orders"
      />
    </section>
  );
}
