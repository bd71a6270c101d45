import { useEffect, useState } from 'preact/hooks';
import { staff } from '../api.js';
import { dateTime, money, venueTimeToIso } from '../format.js';
import { language, t } from '../i18n.js';
import { linesOf, nameOf, type Order, type Venue } from '../model.js';
import { useStore } from '../store.js';
import { LoadError } from '../ui.js';
import { CancelButton } from './pickup.js';

const STATUSES = ['NEW', 'ORDERED', 'READY', 'COMPLETED', 'CANCELLED'];

/** The staff order list (GET /ordering-api/api/orders) with its filters: status, since, pages by cursor. */
export function OrderList(props: { venue: Venue }) {
  useStore(language);
  const [statuses, setStatuses] = useState<string[]>(['ORDERED', 'READY']);
  const [since, setSince] = useState('');
  const [items, setItems] = useState<Order[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [open, setOpen] = useState<string | null>(null);

  const query = (cursor: string | null) => {
    const q = new URLSearchParams({ venue: props.venue.id, limit: '50' });
    if (statuses.length > 0) q.set('status', statuses.join(','));
    // The venue's wall clock, as every time on the screens (docs/screens.md "Money and time").
    if (since) q.set('since', venueTimeToIso(since, props.venue.timeZone));
    if (cursor) q.set('cursor', cursor);
    return `/ordering-api/api/orders?${q.toString()}`;
  };
  const load = (cursor: string | null) => {
    setError(null);
    staff.call<{ items: Order[]; next: string | null }>('GET', query(cursor)).then((page) => {
      setItems((old) => (cursor ? [...old, ...page.items] : page.items));
      setNext(page.next);
    }, setError);
  };
  useEffect(() => load(null), [props.venue.id, statuses.join(','), since]);

  return (
    <section class="orders">
      <div class="toolbar">
        {STATUSES.map((s) => (
          <label key={s} class="check">
            <input
              type="checkbox"
              checked={statuses.includes(s)}
              onChange={(e) => {
                const on = (e.currentTarget as HTMLInputElement).checked;
                setStatuses((old) => (on ? [...old, s] : old.filter((x) => x !== s)));
              }}
            />{' '}
            {t(`status.${s}`)}
          </label>
        ))}
        <label>
          {t('since')}{' '}
          <input
            type="datetime-local"
            value={since}
            onInput={(e) => setSince((e.currentTarget as HTMLInputElement).value)}
          />
        </label>
        <button type="button" class="btn" onClick={() => load(null)}>
          {t('refresh')}
        </button>
      </div>
      {error ? <LoadError error={error} retry={() => load(null)} /> : null}
      <table class="list" data-testid="order-list">
        <thead>
          <tr>
            <th>{t('claimCode')}</th>
            <th>{t('status')}</th>
            <th>{t('type')}</th>
            <th>{t('created')}</th>
            <th>{t('lines')}</th>
            <th>{t('total')}</th>
            <th>
              <span class="sr-only">{t('actions')}</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {items.map((o) => (
            <tr key={o.id} onClick={() => setOpen(open === o.id ? null : o.id)}>
              <td class="code">{o.claimCode}</td>
              <td>
                <span class={`badge ${o.status.toLowerCase()}`}>{t(`status.${o.status}`)}</span>
              </td>
              <td>{t(`type.${o.orderType}`)}</td>
              <td data-testid="order-created">{dateTime(o.created, props.venue.timeZone)}</td>
              <td>
                {open === o.id
                  ? linesOf(o).map((l) => (
                      <div key={l.id}>
                        {l.quantity} × {nameOf(l)} <small class="muted">{t(`status.${l.status}`)}</small>
                      </div>
                    ))
                  : linesOf(o).filter((l) => l.status !== 'CANCELLED').length}
              </td>
              <td>{money(o.total)}</td>
              {/* biome-ignore lint/a11y/useKeyWithClickEvents: only keeps a click on the cancel button from also opening the row. */}
              <td onClick={(e) => e.stopPropagation()}>{!o.closed && <CancelButton order={o} />}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {items.length === 0 && !error && <p class="empty">{t('noOrders')}</p>}
      {next && (
        <button type="button" class="btn" onClick={() => load(next)}>
          {t('more')}
        </button>
      )}
    </section>
  );
}
