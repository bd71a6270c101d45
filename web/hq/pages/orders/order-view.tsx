import type { CENTRAL_SOURCE } from '../../../../src/shared/hq-inbox.js';
import { ApiError } from '../../../http.js';
import { navigate } from '../../../router.js';
import { hq } from '../../api.js';
import { dateTime, money, t } from '../../i18n.js';
import { useVenueName } from '../../pickers.js';
import { type Column, DataTable } from '../../table.js';
import { Loaded, useLoad } from '../../ui.js';
import { EntryBadge } from './entries.js';
import { useDeviceName } from './devices.js';
import { contactText, StatusBadge } from './search.js';
import { type HqOrder, type InboxEntry, lineName, type OrderVersion } from './types.js';

const isNotFound = (err: unknown) => err instanceof ApiError && err.status === 404;

type Line = HqOrder['buckets'][number]['lines'][number];
const lineTotal = (l: Line) => (Number(l.price) * l.quantity).toFixed(2);

const COMMANDS = ['new', 'append', 'update', 'remove', 'submit', 'ready', 'complete', 'cancel'];
/** A command's name in the page's language (docs/orders.md "The order lifecycle"); an unknown kind as the box sent it. */
const commandName = (kind: string) => (COMMANDS.includes(kind) ? t(`orders.command.${kind}`) : kind);

/** An order's source when headquarters made it: typed against the shared constant, without bundling its module. */
const CENTRAL: typeof CENTRAL_SOURCE = 'central';

/**
 * One order as its box last sent it (GET /hq-api/api/orders/:id): its lines and totals per venue, and every version
 * with the command that made it (GET .../versions): who (user, staff or not), when (confirmed on the box, received
 * at the central), on which box, and the status after it.
 */
export function OrderView(props: { id: string }) {
  const venueName = useVenueName();
  const deviceName = useDeviceName();
  const state = useLoad(async () => {
    const id = encodeURIComponent(props.id);
    const [order, versions] = await Promise.all([
      hq.get<HqOrder>(`/orders/${id}`).catch((err: unknown) => (isNotFound(err) ? null : Promise.reject(err))),
      hq
        .get<OrderVersion[]>(`/orders/${id}/versions`)
        .catch((err: unknown) => (isNotFound(err) ? [] : Promise.reject(err))),
    ]);
    // An order taken at headquarters (or one the box has not sent back yet): its entry says what the box made of
    // it, and holds the contact the call centre typed. A box's own order has no entry: not asked for.
    const entry =
      !order || order.source === CENTRAL
        ? await hq
            .get<InboxEntry>(`/inbox/${id}`)
            .catch((err: unknown) => (isNotFound(err) ? null : Promise.reject(err)))
        : null;
    if (!order && !entry) await hq.get(`/orders/${id}`); // the central's own 404, as it words it
    return { order, versions, entry };
  }, [props.id]);
  const columns: Column<Line>[] = [
    { label: t('orders.line.product'), cell: (l) => lineName(l.product, l.productId) },
    { label: t('orders.line.productId'), cell: (l) => l.productId },
    { label: t('orders.line.quantity'), cell: (l) => l.quantity, numeric: true },
    { label: t('orders.line.price'), cell: (l) => money(l.price), csv: (l) => l.price, numeric: true },
    { label: t('orders.line.total'), cell: (l) => money(lineTotal(l)), csv: lineTotal, numeric: true },
    { label: t('orders.col.status'), cell: (l) => <StatusBadge status={l.status} />, csv: (l) => l.status },
    { label: t('orders.line.note'), cell: (l) => l.extra?.note ?? '' },
  ];
  return (
    <div data-testid="order-view">
      <div class="row spread">
        <h1>{t('orders.orderTitle', { id: props.id.slice(0, 8) })}</h1>
        <button type="button" class="btn" onClick={() => navigate('/orders')}>
          {t('orders.back')}
        </button>
      </div>
      <Loaded state={state}>
        {({ order, versions, entry }) =>
          !order ? (
            entry && <NotArrived entry={entry} onReload={state.reload} />
          ) : (
            <>
              <section class="card" aria-labelledby="order-facts-h">
                <h2 id="order-facts-h">{t('orders.facts')}</h2>
                <dl class="orders-facts">
                  <dt>{t('orders.col.status')}</dt>
                  <dd>
                    <StatusBadge status={order.status} />
                  </dd>
                  <dt>{t('orders.col.type')}</dt>
                  <dd>{t(`orders.type.${order.orderType}`)}</dd>
                  <dt>{t('orders.col.source')}</dt>
                  <dd>{order.source}</dd>
                  <dt>{t('orders.col.created')}</dt>
                  <dd>{dateTime(order.created)}</dd>
                  <dt>{t('orders.lastChanged')}</dt>
                  <dd>{dateTime(order.lastChanged)}</dd>
                  <dt>{t('orders.claimCode')}</dt>
                  <dd class="mono">{order.claimCode || '–'}</dd>
                  <dt>{t('orders.device')}</dt>
                  <dd>{deviceName(order.deviceId)}</dd>
                  <dt>{t('orders.col.contact')}</dt>
                  <dd data-testid="order-contact">
                    {contactText(order.contact ?? (entry?.body.contact as HqOrder['contact'])) || '–'}
                  </dd>
                  <dt>{t('orders.col.total')}</dt>
                  <dd data-testid="order-total">{money(order.total)}</dd>
                </dl>
                <p class="mono muted">{order.id}</p>
              </section>
              {order.buckets.map((b) => (
                <section class="card" key={b.venue} aria-label={venueName(b.venue)}>
                  <DataTable
                    columns={columns}
                    rows={b.lines}
                    csvName={`zamowienie-${order.id.slice(0, 8)}`}
                    caption={t('orders.linesOf', { venue: venueName(b.venue) })}
                    rowKey={(l) => l.id}
                    testid="order-lines"
                  />
                </section>
              ))}
              <section class="card" aria-labelledby="order-versions-h">
                <h2 id="order-versions-h">{t('orders.versions')}</h2>
                <ol class="timeline" data-testid="order-timeline">
                  {versions.map((v) => (
                    <li key={`${v.version}-${v.seq}`} data-testid="order-version">
                      <strong>
                        {t('orders.version', { n: v.version })}: {commandName(v.command.kind)}
                      </strong>{' '}
                      <StatusBadge status={v.order.status} />
                      <div class="muted">
                        {t('orders.by', { user: v.command.userId })}{' '}
                        <span class={`badge ${v.command.staff ? 'orders-good' : ''}`}>
                          {v.command.staff ? t('orders.staff') : t('orders.notStaff')}
                        </span>
                      </div>
                      <div class="muted">
                        {t('orders.when', {
                          confirmed: dateTime(v.command.confirmedAt),
                          received: dateTime(v.receivedAt),
                        })}
                      </div>
                      <div class="muted">
                        {t('orders.onDevice')} {deviceName(v.deviceId)} · {t('orders.col.total')} {money(v.order.total)}
                      </div>
                    </li>
                  ))}
                </ol>
              </section>
            </>
          )
        }
      </Loaded>
    </div>
  );
}

/**
 * An order headquarters sent that the central has no copy of yet: pending at its box, or refused there (no order
 * exists then: docs/sync.md "Orders created at the central"), with the box's codes.
 */
function NotArrived(props: { entry: InboxEntry; onReload: () => void }) {
  const { entry } = props;
  return (
    <section class="card" aria-labelledby="order-entry-h" data-testid="order-entry">
      <h2 id="order-entry-h">{t('orders.notArrived')}</h2>
      <p>
        {t('orders.entryState')}: <EntryBadge entry={entry} /> · {dateTime(entry.createdAt)}
      </p>
      {entry.status === 'rejected' ? (
        <ul class="orders-codes">
          {entry.codes.map((c, i) => (
            <li key={i}>
              <code>{c.code}</code> {c.message}
            </li>
          ))}
        </ul>
      ) : (
        <p class="muted">{t('orders.notArrivedYet')}</p>
      )}
      <button type="button" class="btn" onClick={props.onReload}>
        {t('orders.reload')}
      </button>
    </section>
  );
}
