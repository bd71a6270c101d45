import { Store, useStore } from '../store.js';
import catalogue from './pages/catalogue/strings.js';
import dashboard from './pages/dashboard/strings.js';
import fleet from './pages/fleet/strings.js';
import orders from './pages/orders/strings.js';
import reports from './pages/reports/strings.js';
import stock from './pages/stock/strings.js';
import SHELL from './strings.js';

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
