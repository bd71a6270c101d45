import { useState } from 'preact/hooks';
import { staff } from '../api.js';
import type { VenueFeed } from '../feed.js';
import { money } from '../format.js';
import { t } from '../i18n.js';
import { linesOf, nameOf, type Order, type Venue } from '../model.js';
import { useStore, useTick } from '../store.js';
import { Action, age } from '../ui.js';

/** Pick-up: the customer shows the claim code, the waiter finds the order and hands it over (`complete`). */
export function Pickup(props: { feed: VenueFeed; venue: Venue }) {
  const orders = useStore(props.feed.orders);
  const now = useTick(10_000);
  const [code, setCode] = useState('');
  const [searched, setSearched] = useState<string | null>(null);
  // The order just handed over: confirmed once the box says it is COMPLETED (its ORDER_CHANGE on the venue socket),
  // not at the command's 200, which only says the command is queued (docs/orders.md "The order lifecycle").
  const [handing, setHanding] = useState<string | null>(null);
  const closed = useStore(props.feed.closed);
  const handedOver = handing === null ? undefined : closed.find((o) => o.id === handing && o.status === 'COMPLETED');
  const open = [...orders.values()].filter((o) => o.status === 'ORDERED' || o.status === 'READY');
  const found = searched === null ? undefined : open.find((o) => o.claimCode === searched);
  const ready = open.filter((o) => o.status === 'READY');
  const cooking = open.filter((o) => o.status === 'ORDERED');
  return (
    <section class="pickup">
      <form
        class="card find"
        onSubmit={(e) => {
          e.preventDefault();
          setHanding(null);
          setSearched(code.trim());
        }}
      >
        <label>
          {t('claimCode')}
          <input
            data-testid="claim-input"
            inputMode="numeric"
            autocomplete="off"
            maxLength={12}
            value={code}
            onInput={(e) => setCode((e.currentTarget as HTMLInputElement).value.replace(/\s/g, ''))}
          />
        </label>
        <button type="submit" class="btn primary" data-testid="find">
          {t('find')}
        </button>
      </form>
      {searched !== null && !found && (
        <p class="form-error" data-testid="not-found">
          {t('notFound')}
        </p>
      )}
      {handedOver && (
        <p class="card handed-over" role="status" data-testid="handed-over" data-claim={handedOver.claimCode}>
          <span aria-hidden="true">✓ </span>
          {t('handedOver')} <span class="code">{handedOver.claimCode}</span>
        </p>
      )}
      {found && (
        <OrderDetail
          order={found}
          onDone={() => {
            setHanding(found.id);
            setSearched(null);
            setCode('');
          }}
        />
      )}
      <div class="columns">
        <div>
          <h2>{t('readyOrders')}</h2>
          <div class="chips">
            {ready.map((o) => (
              <button
                type="button"
                key={o.id}
                class="chip ready"
                onClick={() => {
                  setHanding(null);
                  setCode(o.claimCode);
                  setSearched(o.claimCode);
                }}
              >
                {o.claimCode}
              </button>
            ))}
          </div>
        </div>
        <div>
          <h2>{t('inKitchen')}</h2>
          <div class="chips">
            {cooking.map((o) => (
              <span key={o.id} class="chip">
                {o.claimCode} <small>{age(o.lastChanged, now)}</small>
              </span>
            ))}
          </div>
        </div>
      </div>
    </section>
  );
}

function OrderDetail(props: { order: Order; onDone: () => void }) {
  const { order } = props;
  return (
    <div class="card detail" data-testid="found-order" data-status={order.status}>
      <h2>
        <span class="code">{order.claimCode}</span> {t(`status.${order.status}`)} · {t(`type.${order.orderType}`)}
      </h2>
      <ul>
        {linesOf(order)
          .filter((l) => l.status !== 'CANCELLED')
          .map((l) => (
            <li key={l.id}>
              {l.quantity} × {nameOf(l)}
            </li>
          ))}
      </ul>
      <p>
        {t('total')}: <b>{money(order.total)}</b>
      </p>
      <div class="row">
        <Action
          class="btn primary big"
          testid="complete"
          onRun={async () => {
            await staff.command(`/ordering-api/api/order/${order.id}/complete`, { claimCode: order.claimCode });
            props.onDone();
          }}
        >
          {t('complete')}
        </Action>
        <CancelButton order={order} />
      </div>
    </div>
  );
}

/** Cancel with a reason (staff may cancel until the order is completed: docs/orders.md "The order lifecycle"). */
export function CancelButton(props: { order: Order }) {
  const [asking, setAsking] = useState(false);
  const [reason, setReason] = useState('');
  if (!asking)
    return (
      <button type="button" class="btn danger" data-testid="cancel" onClick={() => setAsking(true)}>
        {t('cancel')}
      </button>
    );
  return (
    <span class="cancel-form">
      <input
        placeholder={t('cancelReason')}
        aria-label={t('cancelReason')}
        data-testid="cancel-reason"
        maxLength={200}
        value={reason}
        onInput={(e) => setReason((e.currentTarget as HTMLInputElement).value)}
      />
      <Action
        class="btn danger"
        testid="cancel-confirm"
        onRun={async () => {
          await staff.command(
            `/ordering-api/api/order/${props.order.id}/cancel`,
            reason.trim() ? { reason: reason.trim() } : {},
          );
          setAsking(false);
        }}
      >
        {t('cancelConfirm')}
      </Action>
      <button type="button" class="btn ghost" aria-label={t('close')} onClick={() => setAsking(false)}>
        ×
      </button>
    </span>
  );
}
