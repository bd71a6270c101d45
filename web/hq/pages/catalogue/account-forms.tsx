import { useState } from 'preact/hooks';
import { loadCatalogue } from '../../data.js';
import { type ApiForm, Field, inputValue, useApiForm } from '../../form.js';
import { t } from '../../i18n.js';
import { showError } from '../../ui.js';
import { type ChangeAnswer, CreateError, changed, changeProps, SaveError } from './common.js';

/**
 * The forms the staff users, clients and warehouses share. Each change is one call with If-Match of the row's rev
 * ("0" when adding: an existing row is never replaced silently).
 */

/** Runs one change and announces its rev. */
export function useChange() {
  const form = useApiForm();
  const run = (what: string, call: () => Promise<ChangeAnswer>) =>
    form.run(async () => {
      await changed(await call(), what);
    });
  return { form, run };
}

/** The refusal of a row's change (a 412: the row changed; reload shows it). */
export const RowError = (props: { form: ApiForm }) => (
  <SaveError form={props.form} onLoadCurrent={() => void loadCatalogue(true).catch(showError)} />
);

/** An inline form of one secret (a new password or client secret), shown under the table. */
export function SecretForm(props: {
  title: string;
  label: string;
  pointer: string;
  testid: string;
  onSubmit: (secret: string) => Promise<boolean>;
  onCancel: () => void;
  form: ApiForm;
}) {
  const [secret, setSecret] = useState('');
  return (
    <form
      class="card inline-form"
      data-testid={props.testid}
      onSubmit={(e) => {
        e.preventDefault();
        void props.onSubmit(secret).then((ok) => ok && props.onCancel());
      }}
    >
      <h3>{props.title}</h3>
      <Field label={props.label} error={props.form.fieldError(props.pointer)} hint={t('catalogue.secretHint')}>
        {(a) => (
          <input
            {...a}
            {...changeProps(props.form.busy)}
            type="password"
            autocomplete="new-password"
            required
            value={secret}
            onInput={(e) => setSecret(inputValue(e))}
          />
        )}
      </Field>
      <div class="row">
        <button type="submit" class="btn primary" {...changeProps(props.form.busy)}>
          {t('app.save')}
        </button>
        <button type="button" class="btn ghost" onClick={props.onCancel}>
          {t('app.cancel')}
        </button>
      </div>
    </form>
  );
}

/**
 * One input of a create form. `id`: a name the row is known by (trimmed, never autocompleted); `secret`: a new
 * password or client secret; `text`: as typed; `choice`: a select, which keeps its value for the next row.
 */
export interface CreateField {
  key: string;
  label: string;
  /** Where the central's refusal of this input points. */
  error: string;
  kind: 'id' | 'secret' | 'text' | 'choice';
  options?: { value: string; label: string }[];
  initial?: string;
}

/**
 * The form that adds a staff user, a client or a warehouse: `send` makes the call with If-Match "0", so a row of
 * that id is never replaced (CreateError says the id is taken). After a row is added what was typed is cleared.
 */
export function CreateForm(props: {
  testid: string;
  titleId: string;
  title: string;
  fields: CreateField[];
  what: (values: Record<string, string>) => string;
  send: (values: Record<string, string>) => Promise<ChangeAnswer>;
}) {
  const add = useChange();
  const [values, setValues] = useState(() => Object.fromEntries(props.fields.map((f) => [f.key, f.initial ?? ''])));
  const inputs = props.fields.map((f) => (
    <CreateInput
      key={f.key}
      field={f}
      form={add.form}
      value={values[f.key] ?? ''}
      onValue={(v) => setValues((x) => ({ ...x, [f.key]: v }))}
    />
  ));
  return (
    <form
      class="card"
      aria-labelledby={props.titleId}
      data-testid={props.testid}
      onSubmit={(e) => {
        e.preventDefault();
        void add
          .run(props.what(values), () => props.send(values))
          .then((ok) => {
            if (!ok) return;
            setValues((x) =>
              Object.fromEntries(props.fields.map((f) => [f.key, f.kind === 'choice' ? x[f.key]! : ''])),
            );
          });
      }}
    >
      <h2 id={props.titleId}>{props.title}</h2>
      <CreateError form={add.form} />
      {props.fields.length > 1 ? <div class="form-grid">{inputs}</div> : inputs}
      <button type="submit" class="btn primary" {...changeProps(add.form.busy)}>
        {t('app.add')}
      </button>
    </form>
  );
}

function CreateInput(props: { field: CreateField; form: ApiForm; value: string; onValue: (v: string) => void }) {
  const { field, value } = props;
  const ch = changeProps(props.form.busy);
  return (
    <Field
      label={field.label}
      error={props.form.fieldError(field.error)}
      hint={field.kind === 'secret' ? t('catalogue.secretHint') : undefined}
    >
      {(a) => {
        if (field.kind === 'choice')
          return (
            <select
              {...a}
              {...ch}
              value={value}
              onChange={(e) => props.onValue((e.currentTarget as HTMLSelectElement).value)}
            >
              {field.options?.map((o) => (
                <option key={o.value} value={o.value}>
                  {o.label}
                </option>
              ))}
            </select>
          );
        if (field.kind === 'secret')
          return (
            <input
              {...a}
              {...ch}
              type="password"
              autocomplete="new-password"
              required
              value={value}
              onInput={(e) => props.onValue(inputValue(e))}
            />
          );
        if (field.kind === 'id')
          return (
            <input
              {...a}
              {...ch}
              required
              autocomplete="off"
              value={value}
              onInput={(e) => props.onValue(inputValue(e).trim())}
            />
          );
        return <input {...a} {...ch} required value={value} onInput={(e) => props.onValue(inputValue(e))} />;
      }}
    </Field>
  );
}
