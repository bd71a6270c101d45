import { useStore } from '../store.js';
import { Store } from '../store.js';
import catalogue from './pages/catalogue/strings.js';
import dashboard from './pages/dashboard/strings.js';
import fleet from './pages/fleet/strings.js';
import orders from './pages/orders/strings.js';
import reports from './pages/reports/strings.js';
import stock from './pages/stock/strings.js';

/** The console's own words; each page keeps its own in pages/<page>/strings.ts (keys prefixed by the page). */
const SHELL = {
  pl: {
    'app.title': 'Centrala',
    'app.loading': 'Ładowanie…',
    'app.retry': 'Spróbuj ponownie',
    'app.unreachable': 'Brak połączenia z centralą',
    'app.signIn': 'Zaloguj',
    'app.signInTitle': 'Logowanie do centrali',
    'app.signInAgain': 'Sesja wygasła: zaloguj się ponownie, wpisane dane zostaną zachowane',
    'app.signOut': 'Wyloguj',
    'app.tenant': 'Sieć (identyfikator)',
    'app.username': 'Użytkownik',
    'app.password': 'Hasło',
    'app.readOnly': 'Tylko podgląd: Twoje konto nie może wprowadzać zmian',
    'app.save': 'Zapisz',
    'app.saved': 'Zapisano',
    'app.cancel': 'Anuluj',
    'app.add': 'Dodaj',
    'app.remove': 'Usuń',
    'app.edit': 'Edytuj',
    'app.close': 'Zamknij',
    'app.search': 'Szukaj',
    'app.more': 'Więcej',
    'app.none': 'brak',
    'app.csv': 'CSV',
    'app.csvTitle': 'Pobierz tabelę jako CSV',
    'app.empty': 'Brak danych',
    'app.language': 'Język',
    'app.venue': 'Lokal',
    'app.allVenues': 'Wszystkie lokale',
    'app.from': 'Od',
    'app.to': 'Do',
    'app.chartTable': 'Dane wykresu',
    'nav.dashboard': 'Pulpit',
    'nav.catalogue': 'Katalog',
    'nav.fleet': 'Urządzenia',
    'nav.orders': 'Zamówienia',
    'nav.stock': 'Magazyn',
    'nav.reports': 'Raporty',
    'nav.main': 'Nawigacja',
  },
  en: {
    'app.title': 'Headquarters',
    'app.loading': 'Loading…',
    'app.retry': 'Try again',
    'app.unreachable': 'The central cannot be reached',
    'app.signIn': 'Sign in',
    'app.signInTitle': 'Sign in to headquarters',
    'app.signInAgain': 'Your session ended: sign in again; what you typed is kept',
    'app.signOut': 'Sign out',
    'app.tenant': 'Chain (tenant id)',
    'app.username': 'Username',
    'app.password': 'Password',
    'app.readOnly': 'Read only: your account cannot make changes',
    'app.save': 'Save',
    'app.saved': 'Saved',
    'app.cancel': 'Cancel',
    'app.add': 'Add',
    'app.remove': 'Remove',
    'app.edit': 'Edit',
    'app.close': 'Close',
    'app.search': 'Search',
    'app.more': 'More',
    'app.none': 'none',
    'app.csv': 'CSV',
    'app.csvTitle': 'Download the table as CSV',
    'app.empty': 'No data',
    'app.language': 'Language',
    'app.venue': 'Venue',
    'app.allVenues': 'All venues',
    'app.from': 'From',
    'app.to': 'To',
    'app.chartTable': 'Chart data',
    'nav.dashboard': 'Dashboard',
    'nav.catalogue': 'Catalogue',
    'nav.fleet': 'Fleet',
    'nav.orders': 'Orders',
    'nav.stock': 'Stock',
    'nav.reports': 'Reports',
    'nav.main': 'Navigation',
  },
};

export type Lang = 'pl' | 'en';
const PAGES = [dashboard, catalogue, fleet, orders, stock, reports];
const DICT: Record<Lang, Record<string, string>> = {
  pl: Object.assign({}, SHELL.pl, ...PAGES.map((p) => p.pl)),
  en: Object.assign({}, SHELL.en, ...PAGES.map((p) => p.en)),
};

const LANG_KEY = 'vb.hq.lang';
const saved = localStorage.getItem(LANG_KEY);
export const language = new Store<Lang>(saved === 'en' || saved === 'pl' ? saved : 'pl');
document.documentElement.lang = language.value;

export function setLanguage(lang: Lang): void {
  localStorage.setItem(LANG_KEY, lang);
  document.documentElement.lang = lang;
  language.set(lang);
}

/** The text of `key` in the current language, `{name}` replaced from `vars`; the key itself when missing. */
export function t(key: string, vars: Record<string, string | number> = {}): string {
  const text = DICT[language.value][key] ?? DICT.pl[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (whole, name: string) => (name in vars ? String(vars[name]) : whole));
}

/** Re-renders the caller when the language changes. */
export const useLanguage = (): Lang => useStore(language);

const locale = () => (language.value === 'pl' ? 'pl-PL' : 'en-GB');

/** "12.50" (the API's money) as the language writes it, with the currency. */
export function money(value: string | null | undefined): string {
  if (value === null || value === undefined || value === '') return '–';
  return new Intl.NumberFormat(locale(), { style: 'currency', currency: 'PLN' }).format(Number(value));
}

export function number(value: number | null | undefined, digits = 0): string {
  if (value === null || value === undefined) return '–';
  return new Intl.NumberFormat(locale(), { maximumFractionDigits: digits }).format(value);
}

/** An ISO date-time in the browser's time zone. */
export function dateTime(iso: string | null | undefined): string {
  if (!iso) return '–';
  return new Intl.DateTimeFormat(locale(), { dateStyle: 'short', timeStyle: 'medium' }).format(new Date(iso));
}

/** Seconds as "4 min 05 s". */
export function duration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return '–';
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const rest = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h} h ${m} min` : `${m} min ${rest} s`;
}

/** How long ago, roughly ("3 min", "2 h", "5 d"). */
export function ago(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '–';
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h`;
  return `${Math.floor(s / 86_400)} d`;
}
