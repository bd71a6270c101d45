import { useEffect, useState } from 'preact/hooks';
import { staff } from '../api.js';
import type { VenueFeed } from '../feed.js';
import { addMoney, money } from '../format.js';
import { language, t } from '../i18n.js';
import { linesOf, type Menu, nameOf, type Order, productsOf, roundsOf, type Venue } from '../model.js';
import { useStore } from '../store.js';
import { Action, LoadError } from '../ui.js';
import { CancelButton } from './pickup.js';

/** Waiter's console: open tabs (DINE_IN_OPEN), a round added and sent to the kitchen, a tab closed. */
export function Tabs(props: { feed: VenueFeed; venue: Venue }) {
  const orders = useStore(props.feed.orders);
  useStore(language);
  const [selected, setSelected] = useState<string | null>(null);
  const [menu, setMenu] = useState<Menu | null>(null);
  const [menuError, setMenuError] = useState<unknown>(null);
  const tabs = [...orders.values()]
    .filter((o) => o.orderType === 'DINE_IN_OPEN')
    .sort((a, b) => a.created.localeCompare(b.created));
  const tab = tabs.find((o) => o.id === selected);

  const loadMenu = () => {
    setMenuError(null);
    staff
      .call<Menu>(
        'GET',
        `/menu-api/api/menu/${encodeURIComponent(props.venue.menu)}?channel=DINE_IN&instance=${props.venue.id}`,
      )
      .then(setMenu, setMenuError);
  };
  useEffect(loadMenu, [props.venue.id]);

  return (
    <section class="tabs-screen">
      <aside class="tab-list">
        <Action
          class="btn primary"
          testid="new-tab"
          onRun={async () => {
            const c = await staff.command('/ordering-api/api/order/new', {
              orderType: 'DINE_IN_OPEN',
              buckets: [{ venue: props.venue.id }],
            });
            setSelected(c.orderId);
          }}
        >
          + {t('newTab')}
        </Action>
        <h2>{t('tabs')}</h2>
        {tabs.map((o) => (
          <button
            type="button"
            key={o.id}
            class={`tab-item ${o.id === selected ? 'active' : ''}`}
            data-testid="tab"
            onClick={() => setSelected(o.id)}
          >
            <span class="code">{o.claimCode}</span>{' '}
            <span class={`badge ${o.status.toLowerCase()}`}>{t(`status.${o.status}`)}</span>
            <span class="muted tab-total">{money(addMoney(o.total, o.editTotal))}</span>
          </button>
        ))}
      </aside>
      <div class="tab-detail">
        {!tab && selected && <p class="muted">{t('loading')}</p>}
        {tab && <TabDetail tab={tab} venue={props.venue} />}
        {menuError ? (
          <LoadError error={menuError} retry={loadMenu} />
        ) : (
          menu && tab && <ProductPicker menu={menu} tab={tab} venue={props.venue} />
        )}
      </div>
    </section>
  );
}

function TabDetail(props: { tab: Order; venue: Venue }) {
  const { tab } = props;
  useStore(language);
  const unsent = linesOf(tab).filter((l) => l.status === 'NEW');
  return (
    <div class="card" data-testid="tab-detail" data-status={tab.status}>
      <h2>
        <span class="code">{tab.claimCode}</span> {t(`status.${tab.status}`)}
      </h2>
      {roundsOf(tab).map((round, i) => (
        <div key={i} class="round">
          <div class="round-label">
            {t('round')} {i + 1}
          </div>
          <ul>
            {round.map((l) => (
              <li key={l.id}>
                {l.quantity} × {nameOf(l)}
                {l.extra?.note && <em> — {l.extra.note}</em>}
              </li>
            ))}
          </ul>
        </div>
      ))}
      {unsent.length > 0 && (
        <div class="round unsent">
          <div class="round-label">{t('unsent')}</div>
          <ul>
            {unsent.map((l) => (
              <li key={l.id}>
                {l.quantity} × {nameOf(l)}
                {l.extra?.note && <em> — {l.extra.note}</em>}{' '}
                <Action
                  class="btn ghost small"
                  onRun={() =>
                    staff.command(`/ordering-api/api/order/${tab.id}/remove`, { venue: props.venue.id, lines: [l.id] })
                  }
                >
                  ×
                </Action>
              </li>
            ))}
          </ul>
        </div>
      )}
      <p>
        {t('total')}: <b>{money(tab.total)}</b>
        {Number(tab.editTotal) > 0 && (
          <>
            {' '}
            + {money(tab.editTotal)} ({t('unsent')})
          </>
        )}
      </p>
      <div class="row">
        <Action
          class="btn primary"
          testid="submit-round"
          disabled={unsent.length === 0}
          onRun={() => staff.command(`/ordering-api/api/order/${tab.id}/submit`, {})}
        >
          {t('submitRound')}
        </Action>
        {tab.status !== 'NEW' && (
          <Action
            class="btn"
            testid="close-tab"
            onRun={() => staff.command(`/ordering-api/api/order/${tab.id}/complete`, { claimCode: tab.claimCode })}
          >
            {t('closeTab')}
          </Action>
        )}
        <CancelButton order={tab} />
      </div>
    </div>
  );
}

/** Products of the venue's DINE_IN menu; a tap appends one to the tab's next round (with the note, if any). */
function ProductPicker(props: { menu: Menu; tab: Order; venue: Venue }) {
  useStore(language);
  const [note, setNote] = useState('');
  return (
    <div class="card picker">
      <label>
        {t('note')}
        <input
          maxLength={140}
          value={note}
          data-testid="line-note"
          onInput={(e) => setNote((e.currentTarget as HTMLInputElement).value)}
        />
      </label>
      <div class="product-grid small">
        {productsOf(props.menu.root).map(({ product }) => (
          <Action
            key={product.id}
            class={`product-btn ${product.soldOut ? 'sold-out' : ''}`}
            testid="add-product"
            disabled={product.soldOut}
            onRun={async () => {
              const line = {
                productId: product.id,
                quantity: 1,
                status: 'NEW',
                ...(note.trim() ? { extra: { note: note.trim() } } : {}),
              };
              await staff.command(`/ordering-api/api/order/${props.tab.id}/append`, {
                venue: props.venue.id,
                lines: [line],
              });
              setNote('');
            }}
          >
            <span>{product.details.literals.name ?? product.id}</span>
            <small>{product.soldOut ? t('soldOut') : money(product.price)}</small>
          </Action>
        ))}
      </div>
    </div>
  );
}
