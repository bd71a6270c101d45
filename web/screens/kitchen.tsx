import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { staff } from '../api.js';
import type { VenueFeed } from '../feed.js';
import { t } from '../i18n.js';
import { type Menu, nameOf, type Order, type OrderLine, productsOf, roundsOf, type Venue } from '../model.js';
import { dateTime } from '../format.js';
import { useStore, useTick } from '../store.js';
import { Action, age } from '../ui.js';

/** Web Audio: a short two-tone beep made on the spot (no sound file). Browsers allow it after a first touch. */
let audio: AudioContext | undefined;
function beep(): void {
  try {
    audio ??= new AudioContext();
    if (audio.state === 'suspended') void audio.resume();
    const now = audio.currentTime;
    for (const [i, freq] of [880, 1320].entries()) {
      const osc = audio.createOscillator();
      const gain = audio.createGain();
      osc.frequency.value = freq;
      gain.gain.setValueAtTime(0.0001, now + i * 0.18);
      gain.gain.exponentialRampToValueAtTime(0.3, now + i * 0.18 + 0.02);
      gain.gain.exponentialRampToValueAtTime(0.0001, now + i * 0.18 + 0.16);
      osc.connect(gain).connect(audio.destination);
      osc.start(now + i * 0.18);
      osc.stop(now + i * 0.18 + 0.17);
    }
  } catch {
    // no audio on this device: the card's highlight still shows
  }
  document.body.dataset.beeps = String(Number(document.body.dataset.beeps ?? '0') + 1);
}

const categoryOf = (line: OrderLine): string => line.product.extra?.category ?? '';

/** The kitchen display: ORDERED and READY orders of the venue as cards, live from the venue socket. */
export function Kitchen(props: { feed: VenueFeed; venue: Venue }) {
  const orders = useStore(props.feed.orders);
  const announced = useStore(props.feed.announced);
  const now = useTick(5000);
  const [station, setStation] = useState(localStorage.getItem('vb.station') ?? '');
  const [stations, setStations] = useState<{ id: string; name: string }[]>([]);
  const [audioState, setAudioState] = useState(audio?.state ?? 'suspended');
  const lastBeep = useRef(0);

  useEffect(() => {
    // The kitchen stations: the menu's categories (`extra.category` of each line), all channels' products.
    staff
      .call<Menu>(
        'GET',
        `/menu-api/api/menu/${encodeURIComponent(props.venue.menu)}?channel=DINE_IN&instance=${props.venue.id}`,
      )
      .then(
        (menu) => {
          const seen = new Map<string, string>();
          for (const { product, category } of productsOf(menu.root))
            if (product._?.category) seen.set(product._.category, category);
          setStations([...seen].map(([id, name]) => ({ id, name })));
        },
        () => setStations([]),
      );
  }, [props.venue.id]);

  useEffect(() => {
    if (announced && announced.at > lastBeep.current) {
      lastBeep.current = announced.at;
      beep();
    }
  }, [announced]);

  const cards = useMemo(
    () =>
      [...orders.values()]
        .filter((o) => o.status === 'ORDERED' || o.status === 'READY')
        .map((o) => ({
          order: o,
          rounds: roundsOf(o).map((r) => r.filter((l) => !station || categoryOf(l) === station)),
        }))
        .filter((c) => c.rounds.some((r) => r.length > 0))
        .sort((a, b) =>
          a.order.status === b.order.status
            ? lastRoundAt(a.order).localeCompare(lastRoundAt(b.order))
            : a.order.status === 'ORDERED'
              ? -1
              : 1,
        ),
    [orders, station],
  );

  return (
    <section class="kitchen">
      <div class="toolbar">
        <label>
          {t('station')}{' '}
          <select
            data-testid="station"
            value={station}
            onChange={(e) => {
              const v = (e.currentTarget as HTMLSelectElement).value;
              localStorage.setItem('vb.station', v);
              setStation(v);
            }}
          >
            <option value="">{t('allStations')}</option>
            {stations.map((s) => (
              <option key={s.id} value={s.id}>
                {s.name}
              </option>
            ))}
          </select>
        </label>
        {audioState !== 'running' && (
          <button
            type="button"
            class="btn"
            onClick={() => {
              beep();
              setAudioState(audio?.state ?? 'suspended');
            }}
          >
            {t('soundOn')}
          </button>
        )}
        <span class="muted">
          {cards.length} / {orders.size}
        </span>
      </div>
      {cards.length === 0 && <p class="empty">{t('noOrders')}</p>}
      <div class="cards">
        {cards.map(({ order, rounds }) => (
          <KitchenCard
            key={order.id}
            order={order}
            rounds={rounds}
            now={now}
            timeZone={props.venue.timeZone}
            fresh={announced?.orderId === order.id && now - announced.at < 15_000}
          />
        ))}
      </div>
    </section>
  );
}

const lastRoundAt = (o: Order): string => roundsOf(o).at(-1)?.[0]?.updated ?? o.lastChanged;

function KitchenCard(props: { order: Order; rounds: OrderLine[][]; now: number; timeZone: string; fresh: boolean }) {
  const { order } = props;
  const latest = props.rounds.length;
  return (
    <article
      class={`order-card ${order.status.toLowerCase()} ${props.fresh ? 'fresh' : ''}`}
      data-testid="kitchen-card"
      data-order={order.id}
      data-claim={order.claimCode}
      data-status={order.status}
    >
      <header>
        <span class="code">{order.claimCode}</span>
        <span class="type">{t(`type.${order.orderType}`)}</span>
        <span class="age" title={dateTime(order.created, props.timeZone)}>
          {age(lastRoundAt(order), props.now)}
        </span>
      </header>
      {props.rounds.map(
        (lines, i) =>
          lines.length > 0 && (
            <div key={i} class={`round ${i + 1 === latest && latest > 1 ? 'latest' : ''}`}>
              {latest > 1 && (
                <div class="round-label">
                  {t('round')} {i + 1}
                </div>
              )}
              <ul>
                {lines.map((l) => (
                  <li key={l.id}>
                    <b>{l.quantity} ×</b> {nameOf(l)}
                    {l.extra?.note && (
                      <div class="note" data-testid="note">
                        {l.extra.note}
                      </div>
                    )}
                  </li>
                ))}
              </ul>
            </div>
          ),
      )}
      <footer>
        {order.status === 'ORDERED' ? (
          <Action
            class="btn primary big"
            testid="ready"
            onRun={() => staff.command(`/ordering-api/api/order/${order.id}/ready`, {})}
          >
            {t('ready')}
          </Action>
        ) : (
          <span class="badge ready">{t('status.READY')}</span>
        )}
      </footer>
    </article>
  );
}
