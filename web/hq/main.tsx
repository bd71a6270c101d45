import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import '../app.css';
import './hq.css';
import { navigate, route } from '../router.js';
import { useStore } from '../store.js';
import {
  hq,
  hqBootstrap,
  loadHqBootstrap,
  reauthNeeded,
  session,
  setTenant,
  signedIn,
  signOut,
  tenant,
} from './api.js';
import { errorText, Field, inputValue } from './form.js';
import { language, setLanguage, t } from './i18n.js';
import { CataloguePage } from './pages/catalogue/index.js';
import { DashboardPage } from './pages/dashboard/index.js';
import { FleetPage } from './pages/fleet/index.js';
import { OrdersPage } from './pages/orders/index.js';
import { ReportsPage } from './pages/reports/index.js';
import { StockPage } from './pages/stock/index.js';
import { Dialog, Toasts } from './ui.js';

/** The console's pages (the central serves index.html at each: docs/console.md "Pages"). */
const PAGES = [
  { path: '/dashboard', label: 'nav.dashboard', page: DashboardPage },
  { path: '/catalogue', label: 'nav.catalogue', page: CataloguePage },
  { path: '/fleet', label: 'nav.fleet', page: FleetPage },
  { path: '/orders', label: 'nav.orders', page: OrdersPage },
  { path: '/stock', label: 'nav.stock', page: StockPage },
  { path: '/reports', label: 'nav.reports', page: ReportsPage },
] as const;

function LanguageSwitch() {
  const lang = useStore(language);
  const other = lang === 'pl' ? 'en' : 'pl';
  return (
    <button
      type="button"
      class="btn ghost lang"
      data-testid="language"
      aria-label={`${t('app.language')}: ${other.toUpperCase()}`}
      onClick={() => setLanguage(other)}
    >
      {other.toUpperCase()}
    </button>
  );
}

/**
 * Sign-in: the tenant (asked only when the central serves several), username and password, with the console's
 * public client. `again`: the session ended under an open page; the page stays as it was behind this form.
 */
function SignInForm(props: { again?: boolean }) {
  const known = useStore(tenant);
  const [tenantId, setTenantId] = useState(known);
  const [username, setUsername] = useState(props.again ? hq.username() : '');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  // Signing in again continues the calls the page was making: as the same user of the same tenant only (another
  // user signs out first, which leaves the page).
  const askTenant = !props.again && !hqBootstrap().tenant;
  return (
    <form
      class="signin-form"
      data-testid="signin"
      onSubmit={(e) => {
        e.preventDefault();
        setBusy(true);
        setError(null);
        if (askTenant) setTenant(tenantId.trim());
        session
          .signIn(username.trim(), password)
          .catch((err: unknown) => setError(errorText(err)))
          .finally(() => setBusy(false));
      }}
    >
      {props.again && <p class="note">{t('app.signInAgain')}</p>}
      {askTenant && (
        <Field label={t('app.tenant')}>
          {(a) => <input {...a} name="tenant" required value={tenantId} onInput={(e) => setTenantId(inputValue(e))} />}
        </Field>
      )}
      <Field label={t('app.username')}>
        {(a) => (
          <input
            {...a}
            name="username"
            autocomplete="username"
            autocapitalize="none"
            required
            readOnly={props.again}
            value={username}
            onInput={(e) => setUsername(inputValue(e))}
          />
        )}
      </Field>
      <Field label={t('app.password')}>
        {(a) => (
          <input
            {...a}
            name="password"
            type="password"
            autocomplete="current-password"
            required
            value={password}
            onInput={(e) => setPassword(inputValue(e))}
          />
        )}
      </Field>
      {error && (
        <p class="form-error" role="alert" data-testid="signin-error">
          {error}
        </p>
      )}
      <div class="row">
        <button type="submit" class="btn primary" disabled={busy}>
          {t('app.signIn')}
        </button>
        {props.again && (
          <button type="button" class="btn ghost" onClick={signOut}>
            {t('app.signOut')}
          </button>
        )}
      </div>
    </form>
  );
}

function Shell() {
  const { path } = useStore(route);
  useStore(language);
  useStore(session.tokens);
  const again = useStore(reauthNeeded);
  const current = PAGES.find((p) => p.path === path) ?? PAGES[0];
  const Page = current.page;
  useEffect(() => {
    document.title = `${t(current.label)} · ${t('app.title')}`;
  }, [current.path, language.value]);
  return (
    <div class="app hq">
      <header class="top">
        <span class="brand">{t('app.title')}</span>
        <nav class="tabs-nav" aria-label={t('nav.main')}>
          {PAGES.map((p) => (
            <a
              key={p.path}
              href={p.path}
              class={current.path === p.path ? 'active' : ''}
              aria-current={current.path === p.path ? 'page' : undefined}
              onClick={(e) => {
                e.preventDefault();
                navigate(p.path);
              }}
            >
              {t(p.label)}
            </a>
          ))}
        </nav>
        <span class="user" data-testid="user">
          {hq.username()}
        </span>
        <LanguageSwitch />
        <button type="button" class="btn ghost" data-testid="signout" onClick={signOut}>
          {t('app.signOut')}
        </button>
      </header>
      <main>
        <Page />
      </main>
      <Dialog title={t('app.signInTitle')} open={again}>
        <SignInForm again />
      </Dialog>
      <Toasts />
    </div>
  );
}

function App() {
  const [ready, setReady] = useState<unknown>(null);
  const isSignedIn = useStore(signedIn);
  useStore(language);
  useEffect(() => {
    loadHqBootstrap().then(
      () => setReady(true),
      (err: unknown) => setReady(err),
    );
  }, []);
  if (ready === null) return <p class="muted pad">{t('app.loading')}</p>;
  if (ready !== true)
    return (
      <p class="load-error pad" role="alert">
        {errorText(ready)}
      </p>
    );
  if (!isSignedIn)
    return (
      <div class="app hq">
        <main class="signin card">
          <div class="row spread">
            <h1>{t('app.signInTitle')}</h1>
            <LanguageSwitch />
          </div>
          <SignInForm />
        </main>
      </div>
    );
  return <Shell />;
}

render(<App />, document.getElementById('app')!);
