import type { ComponentChildren, JSX } from 'preact';
import { useState } from 'preact/hooks';
import { ApiError, UNREACHABLE } from '../http.js';
import { t } from './i18n.js';
import { fieldMessage } from './messages.js';

/**
 * A form's answer from the central: the refusal as a whole (shown at the top of the form) and each field's own
 * message, found by the JSON pointer the central names in `invalidField` (docs/api.md "Errors"). `run` sends the
 * form; nothing is half-saved: the central applies a change whole or refuses it.
 */
export function useApiForm() {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  return {
    busy,
    error,
    /** The central's message for the field at `pointer` (`/price`, `/channelConstraints/DELIVERY/minOrderValue`). */
    fieldError(pointer: string): string | undefined {
      if (!(error instanceof ApiError)) return undefined;
      const code = error.codes.find((c) => c.args?.[0] === pointer && c.code === 'invalidField');
      return code && fieldMessage(code.message, pointer);
    },
    /** Runs `action`; its refusal is kept for the fields and the form's summary. Resolves true on success. */
    async run(action: () => Promise<unknown>): Promise<boolean> {
      setBusy(true);
      setError(null);
      try {
        await action();
        return true;
      } catch (err) {
        setError(err);
        return false;
      } finally {
        setBusy(false);
      }
    },
    clear: () => setError(null),
  };
}
export type ApiForm = ReturnType<typeof useApiForm>;

export function errorText(err: unknown): string {
  if (err instanceof ApiError) {
    if (err.message === UNREACHABLE) return t('app.unreachable');
    // The refusals a user meets in the normal course, in the page's language; the rest as the central wrote them.
    const code = err.codes[0];
    if (code?.code === 'revisionChanged') {
      const by = / by (\S+);/.exec(code.message)?.[1];
      return code.args?.[0] === '0'
        ? t('app.revisionGone')
        : t(by ? 'app.revisionChangedBy' : 'app.revisionChanged', { rev: code.args?.[0] ?? '?', by: by ?? '' });
    }
    if (err.status === 403) return t('app.forbidden');
    if (err.status === 429) return t('app.busy');
    return err.message;
  }
  return err instanceof Error ? err.message : String(err);
}

/** The form's refusal as a whole, announced to screen readers. */
export function FormError(props: { form: ApiForm }) {
  if (!props.form.error) return null;
  return (
    <p class="form-error" role="alert" data-testid="form-error">
      {errorText(props.form.error)}
    </p>
  );
}

let nextId = 1;
/** Attributes an input needs to be labelled and to point at its error. */
export interface FieldInput {
  id: string;
  'aria-describedby'?: string;
  'aria-invalid'?: boolean;
}

/**
 * A labelled input with the central's message for its field below it. `children` gets the attributes the input
 * needs (its id, aria-describedby of the message, aria-invalid).
 */
export function Field(props: {
  label: ComponentChildren;
  error?: string;
  hint?: string;
  class?: string;
  children: (input: FieldInput) => JSX.Element;
}) {
  const [id] = useState(() => `f${nextId++}`);
  const described = [props.error ? `${id}-err` : '', props.hint ? `${id}-hint` : ''].filter(Boolean).join(' ');
  return (
    <div class={`field ${props.error ? 'invalid' : ''} ${props.class ?? ''}`}>
      <label for={id}>{props.label}</label>
      {props.children({
        id,
        'aria-describedby': described || undefined,
        'aria-invalid': props.error ? true : undefined,
      })}
      {props.hint && (
        <span class="hint" id={`${id}-hint`}>
          {props.hint}
        </span>
      )}
      {props.error && (
        <span class="field-error" id={`${id}-err`} data-testid="field-error">
          {props.error}
        </span>
      )}
    </div>
  );
}

/** The value of an input event. */
export const inputValue = (e: Event): string => (e.currentTarget as HTMLInputElement).value;
