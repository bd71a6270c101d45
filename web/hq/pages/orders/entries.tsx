import { useEffect, useState } from 'preact/hooks';
import { hq } from '../../api.js';
import { errorText } from '../../form.js';
import { t } from '../../i18n.js';
import { type Column, DataTable } from '../../table.js';
import { codesText, type InboxEntry } from './types.js';

/** An entry's state as a badge: pending, delivered to the box, applied by it, rejected with its codes. */
export function EntryBadge(props: { entry: Pick<InboxEntry, 'status' | 'codes'> }) {
  const { status, codes } = props.entry;
  const kind = status === 'applied' ? 'orders-good' : status === 'rejected' ? 'orders-bad' : 'orders-wait';
  return (
    <span class={`badge ${kind}`} data-testid="entry-status" data-status={status} title={codesText(codes) || undefined}>
      {t(`orders.entry.${status}`)}
    </span>
  );
}

const settled = (e: InboxEntry | null) => e !== null && (e.status === 'applied' || e.status === 'rejected');

/**
 * Follows one entry (GET /hq-api/api/inbox/:id) until its box applied or refused it, and for an order, until the
 * box's copy reached the central (GET /hq-api/api/orders/:id answers): only then is there an order to link to.
 */
export function useEntryWatch(initial: InboxEntry | null, everyMs = 1500) {
  const [entry, setEntry] = useState<InboxEntry | null>(initial);
  const [orderArrived, setOrderArrived] = useState(false);
  useEffect(() => {
    setEntry(initial);
    setOrderArrived(false);
  }, [initial?.id]);
  const id = entry?.id;
  const done = settled(entry) && (entry?.status === 'rejected' || entry?.kind !== 'order' || orderArrived);
  useEffect(() => {
    if (!id || done) return;
    let stopped = false;
    const tick = async () => {
      try {
        const now = await hq.get<InboxEntry>(`/inbox/${encodeURIComponent(id)}`);
        if (stopped) return;
        setEntry(now);
        if (now.kind === 'order' && now.status === 'applied') {
          const arrived = await hq.get(`/orders/${encodeURIComponent(id)}`).then(
            () => true,
            () => false,
          );
          if (!stopped) setOrderArrived(arrived);
        }
      } catch {
        // Read again at the next tick; the page shows the last state it had.
      }
    };
    const timer = setInterval(() => void tick(), everyMs);
    void tick();
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [id, done]);
  return { entry, orderArrived };
}

/**
 * Headquarters' entries (GET /hq-api/api/inbox), of one kind, read again every few seconds while shown, and at
 * once when `lastSent` (the entry just created) changes.
 */
function useEntries(kind: InboxEntry['kind'], venueId: string, lastSent?: string, everyMs = 4000) {
  const [items, setItems] = useState<InboxEntry[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    let stopped = false;
    const load = () =>
      hq.get<{ items: InboxEntry[] }>('/inbox', { venueId, limit: 100 }).then(
        (r) => {
          if (stopped) return;
          setItems(r.items.filter((e) => e.kind === kind));
          setError(null);
        },
        (err: unknown) => !stopped && setError(err),
      );
    void load();
    const timer = setInterval(() => void load(), everyMs);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [kind, venueId, lastSent]);
  return { items, error };
}

/** Headquarters' entries of one kind for a venue ('' for all) as a table, kept up to date (useEntries). */
export function EntriesTable(props: {
  kind: InboxEntry['kind'];
  venueId: string;
  lastSent?: string;
  columns: Column<InboxEntry>[];
  csvName: string;
  caption: string;
  testid: string;
}) {
  const { items, error } = useEntries(props.kind, props.venueId, props.lastSent);
  return (
    <>
      {error !== null && (
        <p class="load-error" role="alert">
          {errorText(error)}
        </p>
      )}
      {items === null ? (
        <p class="muted">{t('app.loading')}</p>
      ) : (
        <DataTable
          columns={props.columns}
          rows={items}
          csvName={props.csvName}
          caption={props.caption}
          rowKey={(e) => e.id}
          testid={props.testid}
        />
      )}
    </>
  );
}
