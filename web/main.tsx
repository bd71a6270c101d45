import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import './app.css';
import { loadBootstrap, staff } from './api.js';
import { VenueFeed } from './feed.js';
import { language, LanguageSwitch, setInitialLanguage, t } from './i18n.js';
import { LiveSocket } from './live.js';
import { type Notification, notificationText, type Order, type Venue } from './model.js';
import { navigate, route } from './router.js';
import { Kiosk } from './screens/kiosk.js';
import { Kitchen } from './screens/kitchen.js';
import { Manager } from './screens/manager.js';
import { OrderList } from './screens/orders.js';
import { Pickup } from './screens/pickup.js';
import { SignIn } from './screens/signin.js';
import { Tabs } from './screens/tabs.js';
import { Store, useStore } from './store.js';
import { LoadError, showToast, Toasts } from './ui.js';

const STAFF_SCREENS = [
  { path: '/kitchen', label: 'nav.kitchen' },
  { path: '/pickup', label: 'nav.pickup' },
  { path: '/tabs', label: 'nav.tabs' },
  { path: '/orders', label: 'nav.orders' },
  { path: '/manager', label: 'nav.manager' },
] as const;

export const venues = new Store<Venue[]>([]);
const venueId = new Store<string | null>(localStorage.getItem('vb.venue'));

/** Every venue of the tenant: the nearest list from (0, 0) holds them all (the API has no other list). */
async function loadVenues(): Promise<Venue[]> {
  return staff.call<Venue[]>('GET', '/venue-api/api/nearest?lat=0&lng=0');
}

/** The signed-in part: the venue's feed (its socket) and the user's own socket (NOTIFICATIONs of commands). */
function StaffApp(props: { defaultVenue: string | null }) {
  const { path } = useStore(route);
  const list = useStore(venues);
  const selected = useStore(venueId);
  const tokens = useStore(staff.tokens);
  const [error, setError] = useState<unknown>(null);
  const [feed, setFeed] = useState<VenueFeed | null>(null);
  const venue = list.find((v) => v.id === selected) ?? list.find((v) => v.id === props.defaultVenue) ?? list[0];

  const load = () => {
    setError(null);
    loadVenues().then((v) => venues.set(v), setError);
  };
  useEffect(load, []);

  useEffect(() => {
    if (!venue) return undefined;
    const f = new VenueFeed(staff, venue.id);
    f.start();
    setFeed(f);
    return () => f.stop();
  }, [venue?.id]);

  const feedRef = useRef<VenueFeed | null>(null);
  feedRef.current = feed;
  useEffect(() => {
    // The user's own stream: NOTIFICATIONs of this user's commands (a wrong claim code), and the orders they touched.
    const own = new LiveSocket({
      session: staff,
      query: '',
      resync: async () => undefined,
      onFrame(frame) {
        if (frame.type === 'NOTIFICATION') showToast('error', notificationText(frame.payload as Notification));
        else if (frame.type === 'ORDER_CHANGE') {
          const f = feedRef.current;
          if (f && (frame.payload as Order).buckets.some((b) => b.venue === f.venue)) f.note(frame.payload as Order);
        }
      },
    });
    own.start();
    return () => own.stop();
  }, [tokens?.userId]);

  const online = useStore(feed?.socket.online ?? offlineStore);
  if (error)
    return (
      <Shell>
        <LoadError error={error} retry={load} />
      </Shell>
    );
  if (!venue || !feed)
    return (
      <Shell>
        <p class="muted">{t('loading')}</p>
      </Shell>
    );
  const screen = STAFF_SCREENS.find((s) => s.path === path)?.path ?? '/kitchen';
  const title = t(STAFF_SCREENS.find((s) => s.path === screen)!.label);
  return (
    <Shell
      title={title}
      nav={
        <>
          <nav class="tabs-nav" aria-label={t('screens')}>
            {STAFF_SCREENS.map((s) => (
              <a
                key={s.path}
                href={s.path}
                class={screen === s.path ? 'active' : ''}
                aria-current={screen === s.path ? 'page' : undefined}
                onClick={(e) => {
                  e.preventDefault();
                  navigate(s.path);
                }}
              >
                {t(s.label)}
              </a>
            ))}
          </nav>
          <select
            class="venue-select"
            aria-label={t('venue')}
            value={venue.id}
            onChange={(e) => {
              const id = (e.currentTarget as HTMLSelectElement).value;
              localStorage.setItem('vb.venue', id);
              venueId.set(id);
            }}
          >
            {list.map((v) => (
              <option key={v.id} value={v.id}>
                {v.name}
              </option>
            ))}
          </select>
          <span class="user">{tokens?.username}</span>
          <button type="button" class="btn ghost" data-testid="sign-out" onClick={() => staff.signOut()}>
            {t('signOut')}
          </button>
        </>
      }
    >
      {!online && (
        <div class="offline-banner" data-testid="offline">
          {t('offline')}
        </div>
      )}
      {screen === '/kitchen' && <Kitchen feed={feed} venue={venue} />}
      {screen === '/pickup' && <Pickup feed={feed} venue={venue} />}
      {screen === '/tabs' && <Tabs feed={feed} venue={venue} />}
      {screen === '/orders' && <OrderList venue={venue} />}
      {screen === '/manager' && <Manager feed={feed} venue={venue} />}
    </Shell>
  );
}

const offlineStore = new Store(false);

/**
 * The frame of the staff screens. `title` names the screen in its one h1, for screen readers (the active tab of
 * the header shows it on screen): docs/screens.md "Accessibility and layout".
 */
function Shell(props: { title?: string; nav?: preact.ComponentChildren; children: preact.ComponentChildren }) {
  useStore(language);
  return (
    <div class="app">
      <header class="top">
        <span class="brand">venue-box</span>
        {props.nav}
        <LanguageSwitch />
      </header>
      <Toasts />
      <main>
        {props.title && <h1 class="sr-only">{props.title}</h1>}
        {props.children}
      </main>
    </div>
  );
}

function App() {
  const { path } = useStore(route);
  const tokens = useStore(staff.tokens);
  useStore(language);
  const [boot, setBoot] = useState<{ venue: string | null } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const load = () => {
    setError(null);
    loadBootstrap().then((b) => {
      setInitialLanguage(b.language);
      setBoot(b);
    }, setError);
  };
  useEffect(load, []);
  if (error)
    return (
      <Shell>
        <LoadError error={error} retry={load} />
      </Shell>
    );
  if (!boot)
    return (
      <Shell>
        <p class="muted">{t('loading')}</p>
      </Shell>
    );
  if (path === '/kiosk') return <Kiosk />;
  if (!tokens)
    return (
      <Shell>
        <SignIn />
      </Shell>
    );
  return <StaffApp defaultVenue={boot.venue} />;
}

render(<App />, document.getElementById('app')!);
