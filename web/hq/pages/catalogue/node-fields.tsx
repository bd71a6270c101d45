import { useState } from 'preact/hooks';
import { ApiError } from '../../../http.js';
import { hq } from '../../api.js';
import { type ApiForm, Field, inputValue } from '../../form.js';
import { t } from '../../i18n.js';
import { changeProps } from './common.js';

/** What the category and product editors share: the central's messages, the id, the texts. */

/**
 * The central's messages for this node that no input shows (a pointer to the node itself, or a part of it without
 * an input): shown at the top of the node's editor.
 */
export function NodeErrors(props: { form: ApiForm; pointer: string; shown: string[] }) {
  if (!(props.form.error instanceof ApiError)) return null;
  const own = props.form.error.codes.filter((c) => {
    const p = c.args?.[0];
    if (c.code !== 'invalidField' || typeof p !== 'string') return false;
    if (props.shown.includes(p)) return false;
    return p === props.pointer || (p.startsWith(`${props.pointer}/`) && !p.startsWith(`${props.pointer}/items/`));
  });
  if (own.length === 0) return null;
  return (
    <ul class="field-error" data-testid="node-errors">
      {own.map((c) => (
        <li key={c.args![0]}>{c.message}</li>
      ))}
    </ul>
  );
}

/** A node's texts, one input per literal key of the menu (its languages), plus a new key. */
export function LiteralFields(props: {
  literals: Record<string, string>;
  keys: string[];
  pointer: string;
  form: ApiForm;
  onChange: (literals: Record<string, string>) => void;
}) {
  const [newKey, setNewKey] = useState('');
  const keys = [...new Set([...props.keys, ...Object.keys(props.literals)])];
  const ch = changeProps(props.form.busy);
  return (
    <fieldset class="literals">
      <legend>{t('catalogue.texts')}</legend>
      {keys.map((k) => {
        const long = k.startsWith('description');
        return (
          <Field
            key={k}
            label={`${t(`catalogue.literal.${k}`) === `catalogue.literal.${k}` ? k : t(`catalogue.literal.${k}`)} (${k})`}
            error={props.form.fieldError(`${props.pointer}/details/literals/${k}`)}
          >
            {(a) => {
              const value = props.literals[k] ?? '';
              const onInput = (e: Event) => {
                const v = inputValue(e);
                const next = { ...props.literals, [k]: v };
                if (v === '' && k !== 'name') delete next[k];
                props.onChange(next);
              };
              return long ? (
                <textarea {...a} {...ch} data-testid={`literal-${k}`} value={value} onInput={onInput} />
              ) : (
                <input {...a} {...ch} data-testid={`literal-${k}`} value={value} onInput={onInput} />
              );
            }}
          </Field>
        );
      })}
      <div class="row">
        <Field label={t('catalogue.newText')} hint={t('catalogue.newTextHint')}>
          {(a) => <input {...a} {...ch} value={newKey} onInput={(e) => setNewKey(inputValue(e).trim())} />}
        </Field>
        <button
          type="button"
          class="btn small"
          {...ch}
          disabled={ch.disabled || !newKey || newKey in props.literals}
          onClick={() => {
            props.onChange({ ...props.literals, [newKey]: '' });
            setNewKey('');
          }}
        >
          {t('catalogue.addText')}
        </button>
      </div>
    </fieldset>
  );
}

/** A node's id: typed for a new node only (the boxes know a saved one by it, so it stays). */
export function IdField(props: {
  id: string;
  pointer: string;
  isNew: boolean;
  form: ApiForm;
  onChange: (id: string) => void;
}) {
  return (
    <Field
      label={t('catalogue.id')}
      error={props.form.fieldError(`${props.pointer}/id`)}
      hint={props.isNew ? undefined : t('catalogue.idFixed')}
    >
      {(a) => (
        <input
          {...a}
          {...changeProps(props.form.busy)}
          disabled={!props.isNew || props.form.busy || !hq.canWrite()}
          data-testid="node-id"
          value={props.id}
          onInput={(e) => props.onChange(inputValue(e))}
        />
      )}
    </Field>
  );
}
