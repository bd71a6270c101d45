import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { ApiError, UNREACHABLE } from './http.js';
import { t } from './i18n.js';
import { Store, useStore } from './store.js';

/** Messages shown at the top of the screen: the box's own message for anything it refused. */
export interface Toast {
  id: number;
  kind: 'error' | 'info';
  text: string;
}

export const toasts = new Store<Toast[]>([]);
let nextToast = 1;

export function showToast(kind: Toast['kind'], text: string): void {
  const id = nextToast++;
  toasts.update((list) => [...list.slice(-3), { id, kind, text }]);
  setTimeout(() => toasts.update((list) => list.filter((x) => x.id !== id)), kind === 'error' ? 12_000 : 5000);
}

export function errorText(err: unknown): string {
  if (err instanceof ApiError) return err.message === UNREACHABLE ? t('unreachable') : err.message;
  return err instanceof Error ? err.message : String(err);
}

export const showError = (err: unknown): void => showToast('error', errorText(err));

export function Toasts() {
  const list = useStore(toasts);
  return (
    <div class="toasts" role="status" aria-live="polite">
      {list.map((x) => (
        // biome-ignore lint/a11y/useKeyWithClickEvents lint/a11y/noStaticElementInteractions: a toast goes by itself (5 or 12 s) and is announced (role status); a tap only dismisses it early.
        <div
          key={x.id}
          class={`toast ${x.kind}`}
          data-testid={x.kind === 'error' ? 'error' : 'info'}
          onClick={() => toasts.update((l) => l.filter((y) => y.id !== x.id))}
        >
          {x.text}
        </div>
      ))}
    </div>
  );
}

/** A button whose action runs once at a time; a failure shows the box's message. */
export function Action(props: {
  onRun: () => Promise<unknown>;
  class?: string;
  children: ComponentChildren;
  disabled?: boolean;
  testid?: string;
  title?: string;
}) {
  const [busy, setBusy] = useState(false);
  return (
    <button
      type="button"
      class={props.class ?? 'btn'}
      disabled={busy || props.disabled}
      data-testid={props.testid}
      title={props.title}
      onClick={() => {
        setBusy(true);
        props
          .onRun()
          .catch(showError)
          .finally(() => setBusy(false));
      }}
    >
      {props.children}
    </button>
  );
}

/** A box-side failure to load something, in place of the content (never a blank screen). */
export function LoadError(props: { error: unknown; retry?: () => void }) {
  return (
    <div class="load-error" data-testid="load-error">
      <p>{errorText(props.error)}</p>
      {props.retry && (
        <button type="button" class="btn" onClick={props.retry}>
          {t('retry')}
        </button>
      )}
    </div>
  );
}

/** Minutes (or seconds under one) since `iso`. */
export function age(iso: string, now: number): string {
  const s = Math.max(0, Math.floor((now - Date.parse(iso)) / 1000));
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min`;
}
