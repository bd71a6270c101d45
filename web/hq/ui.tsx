import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { Store, useStore } from '../store.js';
import { errorText } from './form.js';
import { t } from './i18n.js';

/** Messages at the top right: what was saved, or what the central refused outside a form. */
interface Toast {
  id: number;
  kind: 'error' | 'info';
  text: string;
}
const toasts = new Store<Toast[]>([]);
let nextToast = 1;

export function showToast(kind: Toast['kind'], text: string): void {
  const id = nextToast++;
  toasts.update((list) => [...list.slice(-3), { id, kind, text }]);
  setTimeout(() => toasts.update((list) => list.filter((x) => x.id !== id)), kind === 'error' ? 12_000 : 5000);
}
export const showError = (err: unknown): void => showToast('error', errorText(err));

export function Toasts() {
  const list = useStore(toasts);
  return (
    <div class="toasts" role="status" aria-live="polite">
      {list.map((x) => (
        <div key={x.id} class={`toast ${x.kind}`} data-testid={x.kind === 'error' ? 'toast-error' : 'toast-info'}>
          {x.text}
          <button
            type="button"
            class="btn ghost small"
            aria-label={t('app.close')}
            onClick={() => toasts.update((l) => l.filter((y) => y.id !== x.id))}
          >
            ×
          </button>
        </div>
      ))}
    </div>
  );
}

/** Data read from the central: `value` once loaded, `error` if the read failed, `reload()` to read again. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[] = []) {
  const [state, setState] = useState<{ value?: T; error?: unknown; loading: boolean }>({ loading: true });
  const generation = useRef(0);
  const reload = () => {
    const mine = ++generation.current;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (value) => mine === generation.current && setState({ value, loading: false }),
      (error: unknown) => mine === generation.current && setState({ error, loading: false }),
    );
  };
  useEffect(reload, deps);
  return { ...state, reload };
}

/** The content once loaded; a failed read in its place with a retry (never a blank page). */
export function Loaded<T>(props: { state: ReturnType<typeof useLoad<T>>; children: (value: T) => ComponentChildren }) {
  const { value, error, reload } = props.state;
  if (error !== undefined)
    return (
      <div class="load-error" role="alert" data-testid="load-error">
        <p>{errorText(error)}</p>
        <button type="button" class="btn" onClick={reload}>
          {t('app.retry')}
        </button>
      </div>
    );
  if (value === undefined) return <p class="muted">{t('app.loading')}</p>;
  return <>{props.children(value)}</>;
}

/** A modal dialog (the native <dialog>: focus kept inside, Escape closes). */
export function Dialog(props: { title: string; open: boolean; onClose?: () => void; children: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (props.open && !d.open) d.showModal();
    if (!props.open && d.open) d.close();
  }, [props.open]);
  return (
    <dialog
      ref={ref}
      class="dialog"
      aria-label={props.title}
      onCancel={(e) => {
        if (!props.onClose) e.preventDefault();
        else props.onClose();
      }}
    >
      <h2>{props.title}</h2>
      {props.open && props.children}
    </dialog>
  );
}

/** Tabs within a page (sub-views), as links so each has its address. */
export function SubNav(props: {
  items: { id: string; label: string }[];
  current: string;
  onSelect: (id: string) => void;
}) {
  return (
    <div class="subnav" role="tablist">
      {props.items.map((i) => (
        <button
          key={i.id}
          type="button"
          role="tab"
          aria-selected={props.current === i.id}
          class={props.current === i.id ? 'active' : ''}
          onClick={() => props.onSelect(i.id)}
        >
          {i.label}
        </button>
      ))}
    </div>
  );
}

/** A note shown instead of the change controls to a user with scope `read`. */
export function ReadOnlyNote() {
  return <p class="note">{t('app.readOnly')}</p>;
}

/** A figure with its label (the dashboard's and the reports' totals). */
export function Kpi(props: { label: string; value: string; testid: string }) {
  return (
    <div class="kpi">
      <span class="value" data-testid={props.testid}>
        {props.value}
      </span>
      <span class="label">{props.label}</span>
    </div>
  );
}

/** Runs `reload` every `ms` while the page is visible (a tab in the background reads nothing). */
export function useEvery(ms: number, reload: () => void): void {
  useEffect(() => {
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') reload();
    }, ms);
    return () => clearInterval(timer);
  }, [ms]);
}
