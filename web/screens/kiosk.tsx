import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { bootstrap, type CommandConfirmation, Session } from '../api.js';
import { ApiError } from '../http.js';
import { language, LanguageSwitch, t } from '../i18n.js';
import { LiveSocket } from '../live.js';
import { money } from '../format.js';
import {
  type Menu,
  type MenuNode,
  type Notification,
  notificationText,
  type Order,
  productsOf,
  type Venue,
} from '../model.js';
import { route } from '../router.js';
import { useStore } from '../store.js';
import { errorText, LoadError, Toasts } from '../ui.js';

const IDLE_MS = 60_000;
const MENU_POLL_MS = 10_000;

type Phase = { kind: 'menu' } | { kind: 'sending' } | { kind: 'claim'; orderId: string };

/**
 * The customers' kiosk (/kiosk?venue=...): no sign-in, an anonymous token per customer; the venue's TAKE_AWAY
 * menu, a basket, the order placed (`new` then `submit`, each with an Idempotency-Key), then the claim code,
 * which turns to "ready" when the kitchen says so on the customer's own socket. A minute without a touch starts
 * over.
 */
export function Kiosk() {
  useStore(language);
  const { query } = useStore(route);
  const venueId = query.get('venue') ?? bootstrap().venue;
  const session = useMemo(() => new Session(null), []);
  const [venue, setVenue] = useState<Venue | null>(null);
  const [menu, setMenu] = useState<Menu | null>(null);
  const [loadError, setLoadError] = useState<unknown>(null);
  const [basket, setBasket] = useState<Map<string, number>>(new Map());
  const [phase, setPhase] = useState<Phase>({ kind: 'menu' });
  const [order, setOrder] = useState<Order | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [online, setOnline] = useState(false);
  // What the socket said, kept so a command's outcome is found even when its frame beat the command's 200.
  const seen = useRef({
    orders: new Map<string, Order>(),
    notes: new Map<string, Notification>(),
    wake: (): void => {},
  });
  const current = useRef<string | null>(null);
  const socket = useRef<LiveSocket | null>(null);

  const loadMenu = async (v: Venue) => {
    const m = await session.call<Menu>(
      'GET',
      `/menu-api/api/menu/${encodeURIComponent(v.menu)}?channel=TAKE_AWAY&instance=${v.id}`,
    );
    setMenu(m);
  };

  const startCustomer = async () => {
    socket.current?.stop();
    await session.signInAnonymous();
    const s = new LiveSocket({
      session,
      query: '',
      onFrame(frame) {
        if (frame.type === 'ORDER_CHANGE') {
          const o = frame.payload as Order;
          if (o.id === current.current) setOrder(o);
          seen.current.orders.set(o.id, o);
        } else if (frame.type === 'NOTIFICATION') {
          const n = frame.payload as Notification;
          seen.current.notes.set(n.event.correlationId, n);
        }
        seen.current.wake();
      },
      async resync() {
        if (current.current) setOrder(await session.call<Order>('GET', `/ordering-api/api/order/${current.current}`));
      },
    });
    s.online.subscribe(setOnline);
    s.start();
    socket.current = s;
  };

  const start = async () => {
    setLoadError(null);
    try {
      if (!venueId) return;
      await startCustomer();
      const all = await session.call<Venue[]>('GET', '/venue-api/api/nearest?lat=0&lng=0');
      const v = all.find((x) => x.id === venueId);
      // Said to the customer in the screen's language; the address's id means nothing to them (staff see it).
      if (!v) throw new ApiError(t('kiosk.unknownVenue'), 404);
      setVenue(v);
      await loadMenu(v);
    } catch (err) {
      setLoadError(err);
    }
  };

  useEffect(() => {
    void start();
    return () => socket.current?.stop();
  }, [venueId]);

  // The menu again every few seconds: sold-out flags come and go (the customer's socket carries no menu events).
  useEffect(() => {
    if (!venue) return undefined;
    const timer = setInterval(() => {
      loadMenu(venue).catch(() => undefined);
    }, MENU_POLL_MS);
    return () => clearInterval(timer);
  }, [venue]);

  const reset = () => {
    const placed = phase.kind === 'claim';
    setBasket(new Map());
    setPhase({ kind: 'menu' });
    setOrder(null);
    setError(null);
    current.current = null;
    // The next customer is another anonymous user: their orders and socket are their own.
    if (placed) startCustomer().catch((err) => setError(errorText(err)));
    if (venue) loadMenu(venue).catch(() => undefined);
  };

  // Idle reset: a minute after the last touch (or the last change of the order on screen).
  const lastActive = useRef(Date.now());
  useEffect(() => {
    const touch = () => {
      lastActive.current = Date.now();
    };
    window.addEventListener('pointerdown', touch);
    window.addEventListener('keydown', touch);
    const timer = setInterval(() => {
      const idle = Date.now() - lastActive.current > IDLE_MS;
      if (idle && (basket.size > 0 || phase.kind !== 'menu')) reset();
    }, 1000);
    return () => {
      window.removeEventListener('pointerdown', touch);
      window.removeEventListener('keydown', touch);
      clearInterval(timer);
    };
  });
  useEffect(() => {
    lastActive.current = Date.now();
  }, [order?.status]);

  /** The command's outcome from the socket: the order once `accept` takes it, or the NOTIFICATION that refused it. */
  const outcome = (c: CommandConfirmation, accept: (o: Order) => boolean): Promise<Order> =>
    new Promise((resolve, reject) => {
      const check = () => {
        const note = seen.current.notes.get(c.correlationId);
        const order = seen.current.orders.get(c.orderId);
        if (!note && !(order && accept(order))) return;
        clearTimeout(timer);
        seen.current.wake = () => undefined;
        if (note) reject(new ApiError(notificationText(note), 200, note.codes));
        else resolve(order!);
      };
      const timer = setTimeout(() => {
        seen.current.wake = () => undefined;
        reject(new ApiError(t('unreachable'), 0));
      }, 20_000);
      seen.current.wake = check;
      check();
    });

  const placeOrder = async () => {
    if (!venue) return;
    setError(null);
    setPhase({ kind: 'sending' });
    try {
      const lines = [...basket].map(([productId, quantity]) => ({ productId, quantity, status: 'NEW' }));
      const created = await session.command('/ordering-api/api/order/new', {
        orderType: 'TAKE_AWAY',
        buckets: [{ venue: venue.id, lines }],
      });
      current.current = created.orderId;
      await outcome(created, () => true);
      const submitted = await session.command(`/ordering-api/api/order/${created.orderId}/submit`, {});
      setOrder(await outcome(submitted, (o) => o.status !== 'NEW'));
      setPhase({ kind: 'claim', orderId: created.orderId });
    } catch (err) {
      setError(errorText(err));
      setPhase({ kind: 'menu' });
      if (current.current) {
        // The basket stays; a new order is made at the next attempt.
        current.current = null;
      }
      loadMenu(venue).catch(() => undefined);
    }
  };

  if (!venueId)
    return (
      <KioskFrame>
        <LoadError error={new Error(t('kiosk.noVenue'))} />
      </KioskFrame>
    );
  if (loadError)
    return (
      <KioskFrame>
        <LoadError error={loadError} retry={() => void start()} />
      </KioskFrame>
    );
  if (!venue || !menu)
    return (
      <KioskFrame>
        <p class="muted">{t('loading')}</p>
      </KioskFrame>
    );

  if (phase.kind === 'claim' && order) {
    // Handed over (COMPLETED) is no longer "ready": the customer has it; a cancelled order says so.
    const status = CLAIM_STATUS[order.status] ?? CLAIM_STATUS.ORDERED!;
    return (
      <KioskFrame venue={venue}>
        <div class={`claim ${status.class}`} data-testid="claim" data-status={order.status}>
          <p>{t('kiosk.yourCode')}</p>
          <div class="claim-code" data-testid="claim-code">
            {order.claimCode}
          </div>
          <p class="claim-status" data-testid="claim-status" role="status">
            {t(status.text)}
          </p>
          <p>
            {t('total')}: <b>{money(order.total)}</b>
          </p>
          <button type="button" class="btn big" onClick={reset}>
            {t('kiosk.newOrder')}
          </button>
        </div>
      </KioskFrame>
    );
  }

  const products = productsOf(menu.root);
  const byId = new Map(products.map((p) => [p.product.id, p.product]));
  const basketLines = [...basket].filter(([id]) => byId.has(id));
  const totalMinor = basketLines.reduce(
    (sum, [id, qty]) => sum + Math.round(Number(byId.get(id)!.price ?? '0') * 100) * qty,
    0,
  );
  const categories = (menu.root.items ?? []).filter((n) => !n.kind.endsWith('/product'));
  const add = (p: MenuNode) => setBasket((old) => new Map(old).set(p.id, (old.get(p.id) ?? 0) + 1));
  const dec = (id: string) =>
    setBasket((old) => {
      const next = new Map(old);
      const q = (next.get(id) ?? 0) - 1;
      if (q > 0) next.set(id, q);
      else next.delete(id);
      return next;
    });
  return (
    <KioskFrame venue={venue} online={online}>
      <div class="kiosk-body">
        <div class="kiosk-menu">
          {categories.map((cat) => (
            <section key={cat.id}>
              <h2>{cat.details.literals.name}</h2>
              <div class="product-grid">
                {productsOf(cat).map(({ product }) => (
                  <button
                    type="button"
                    key={product.id}
                    class={`product ${product.soldOut ? 'sold-out' : ''}`}
                    data-testid="kiosk-product"
                    data-product={product.id}
                    data-sold-out={product.soldOut ? 'true' : 'false'}
                    disabled={product.soldOut || phase.kind !== 'menu'}
                    onClick={() => add(product)}
                  >
                    <ProductImage product={product} />
                    <span class="name">{product.details.literals.name}</span>
                    <span class="price">{product.soldOut ? t('kiosk.unavailable') : money(product.price)}</span>
                  </button>
                ))}
              </div>
            </section>
          ))}
        </div>
        <aside class="basket" data-testid="basket">
          <h2>{t('kiosk.basket')}</h2>
          {basketLines.length === 0 && <p class="muted">{t('kiosk.empty')}</p>}
          <ul>
            {basketLines.map(([id, qty]) => (
              <li key={id}>
                <button type="button" class="btn ghost small" aria-label={t('kiosk.remove')} onClick={() => dec(id)}>
                  −
                </button>
                <span>
                  {qty} × {byId.get(id)!.details.literals.name}
                </span>
                <span>{money(((Math.round(Number(byId.get(id)!.price ?? '0') * 100) * qty) / 100).toFixed(2))}</span>
              </li>
            ))}
          </ul>
          <p class="basket-total">
            {t('total')}: <b>{money((totalMinor / 100).toFixed(2))}</b>
          </p>
          {error && (
            <p class="form-error" data-testid="kiosk-error">
              {error}
            </p>
          )}
          <button
            type="button"
            class="btn primary big"
            data-testid="place-order"
            disabled={basketLines.length === 0 || phase.kind !== 'menu' || !online}
            onClick={() => void placeOrder()}
          >
            {phase.kind === 'sending' ? t('kiosk.sending') : t('kiosk.order')}
          </button>
        </aside>
      </div>
    </KioskFrame>
  );
}

/** What the claim screen says in each status of the order. */
const CLAIM_STATUS: Record<string, { text: string; class: string }> = {
  ORDERED: { text: 'kiosk.preparing', class: '' },
  READY: { text: 'kiosk.ready', class: 'ready' },
  COMPLETED: { text: 'kiosk.handedOver', class: 'done' },
  CANCELLED: { text: 'kiosk.cancelled', class: 'cancelled' },
};

/** The kiosk's frame: the venue's name, and the screen's one h1 (docs/screens.md "Accessibility and layout"). */
function KioskFrame(props: { venue?: Venue; online?: boolean; children: preact.ComponentChildren }) {
  return (
    <div class="app kiosk">
      <header class="top">
        <span class="brand">{props.venue?.name ?? 'venue-box'}</span>
        <h1 class="grow">{t('kiosk.title')}</h1>
        <LanguageSwitch />
      </header>
      {props.online === false && (
        <div class="offline-banner" data-testid="offline">
          {t('offline')}
        </div>
      )}
      <Toasts />
      <main>{props.children}</main>
    </div>
  );
}

/** The menu's main image, or a neutral placeholder when there is none or it does not load. */
function ProductImage(props: { product: MenuNode }) {
  const url = props.product.details.media?.find((m) => m.name === 'MAIN_IMG')?.url ?? '';
  const [failed, setFailed] = useState(false);
  if (!url || failed)
    return (
      <span class="img placeholder" aria-hidden="true">
        {(props.product.details.literals.name ?? '?').slice(0, 1)}
      </span>
    );
  return <img class="img" src={url} alt="" loading="lazy" onError={() => setFailed(true)} />;
}
