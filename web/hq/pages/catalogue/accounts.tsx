import { useState } from 'preact/hooks';
import { newUuid } from '../../../api.js';
import { hq } from '../../api.js';
import { liveOf, loadCatalogue, useCatalogue } from '../../data.js';
import { showError } from '../../ui.js';
import { type ApiForm, Field, inputValue, useApiForm } from '../../form.js';
import { t } from '../../i18n.js';
import { DataTable } from '../../table.js';
import { type ChangeAnswer, ConfirmButton, CreateError, changed, changeProps, SaveError } from './common.js';

/**
 * The boxes' staff users, OAuth clients and warehouses (docs/sync.md "Down: the catalogue"). Each change is one
 * call with If-Match of the row's rev ("0" when adding: an existing row is never replaced silently).
 */
const enc = encodeURIComponent;

/** Runs one change and announces its rev. */
function useChange() {
  const form = useApiForm();
  const run = (what: string, call: () => Promise<ChangeAnswer>) =>
    form.run(async () => {
      await changed(await call(), what);
    });
  return { form, run };
}

/** The refusal of a row's change (a 412: the row changed; reload shows it). */
const RowError = (props: { form: ApiForm }) => (
  <SaveError form={props.form} onLoadCurrent={() => void loadCatalogue(true).catch(showError)} />
);

/** An inline form of one secret (a new password or client secret), shown under the table. */
function SecretForm(props: {
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

export function StaffView() {
  const users = liveOf(useCatalogue(), 'user').sort((a, b) => a.data.username.localeCompare(b.data.username));
  const { form, run } = useChange();
  const add = useChange();
  const [renew, setRenew] = useState<string | null>(null);
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [scope, setScope] = useState('read write');
  const renewing = users.find((u) => u.data.username === renew);
  return (
    <div class="stack">
      <section class="card" aria-labelledby="staff-h">
        <h2 id="staff-h">{t('catalogue.staff')}</h2>
        <p class="muted">{t('catalogue.staffNote')}</p>
        <RowError form={form} />
        <DataTable
          csvName="staff-users"
          testid="staff-table"
          rows={users}
          rowKey={(u) => u.id}
          columns={[
            { label: t('catalogue.username'), cell: (u) => u.data.username },
            {
              label: t('catalogue.scope'),
              cell: (u) => t(`catalogue.scope.${u.data.scope}`),
              csv: (u) => u.data.scope,
            },
            { label: t('catalogue.rev'), cell: (u) => u.rev, numeric: true },
            {
              label: t('catalogue.actions'),
              csv: () => null,
              cell: (u) => (
                <span class="row">
                  <button
                    type="button"
                    class="btn small"
                    data-testid={`staff-password-${u.data.username}`}
                    {...changeProps(form.busy)}
                    onClick={() => setRenew(u.data.username)}
                  >
                    {t('catalogue.newPassword')}
                  </button>
                  <ConfirmButton
                    label={t('catalogue.retire')}
                    confirm={t('catalogue.retireConfirm')}
                    busy={form.busy}
                    testid={`staff-retire-${u.data.username}`}
                    onConfirm={() =>
                      void run(t('catalogue.staffWhat', { name: u.data.username }), () =>
                        hq.send('DELETE', `/staff-users/${enc(u.data.username)}`, undefined, { ifMatch: u.rev }),
                      )
                    }
                  />
                </span>
              ),
            },
          ]}
        />
        {renewing && (
          <SecretForm
            key={renewing.id}
            title={t('catalogue.newPasswordFor', { name: renewing.data.username })}
            label={t('catalogue.password')}
            pointer="/password"
            testid="staff-password-form"
            form={form}
            onCancel={() => setRenew(null)}
            onSubmit={(secret) =>
              run(t('catalogue.staffWhat', { name: renewing.data.username }), () =>
                hq.send(
                  'PUT',
                  `/staff-users/${enc(renewing.data.username)}`,
                  { password: secret, scope: renewing.data.scope },
                  { ifMatch: renewing.rev },
                ),
              )
            }
          />
        )}
      </section>
      <form
        class="card"
        aria-labelledby="staff-add-h"
        data-testid="staff-add"
        onSubmit={(e) => {
          e.preventDefault();
          void add
            .run(t('catalogue.staffWhat', { name: username }), () =>
              hq.send('PUT', `/staff-users/${enc(username)}`, { password, scope }, { ifMatch: 0 }),
            )
            .then((ok) => {
              if (!ok) return;
              setUsername('');
              setPassword('');
            });
        }}
      >
        <h2 id="staff-add-h">{t('catalogue.staffAdd')}</h2>
        <CreateError form={add.form} />
        <div class="form-grid">
          <Field label={t('catalogue.username')} error={add.form.fieldError('username')}>
            {(a) => (
              <input
                {...a}
                {...changeProps(add.form.busy)}
                required
                autocomplete="off"
                value={username}
                onInput={(e) => setUsername(inputValue(e).trim())}
              />
            )}
          </Field>
          <Field
            label={t('catalogue.password')}
            error={add.form.fieldError('/password')}
            hint={t('catalogue.secretHint')}
          >
            {(a) => (
              <input
                {...a}
                {...changeProps(add.form.busy)}
                type="password"
                autocomplete="new-password"
                required
                value={password}
                onInput={(e) => setPassword(inputValue(e))}
              />
            )}
          </Field>
          <Field label={t('catalogue.scope')} error={add.form.fieldError('/scope')}>
            {(a) => (
              <select
                {...a}
                {...changeProps(add.form.busy)}
                value={scope}
                onChange={(e) => setScope((e.currentTarget as HTMLSelectElement).value)}
              >
                <option value="read write">{t('catalogue.scope.read write')}</option>
                <option value="read">{t('catalogue.scope.read')}</option>
              </select>
            )}
          </Field>
        </div>
        <button type="submit" class="btn primary" {...changeProps(add.form.busy)}>
          {t('app.add')}
        </button>
      </form>
    </div>
  );
}

export function ClientsView() {
  const clients = liveOf(useCatalogue(), 'client').sort((a, b) => a.id.localeCompare(b.id));
  const { form, run } = useChange();
  const add = useChange();
  const [renew, setRenew] = useState<string | null>(null);
  const [clientId, setClientId] = useState('');
  const [secret, setSecret] = useState('');
  const renewing = clients.find((c) => c.id === renew);
  return (
    <div class="stack">
      <section class="card" aria-labelledby="clients-h">
        <h2 id="clients-h">{t('catalogue.clients')}</h2>
        <p class="muted">{t('catalogue.clientsNote')}</p>
        <RowError form={form} />
        <DataTable
          csvName="clients"
          testid="client-table"
          rows={clients}
          rowKey={(c) => c.id}
          columns={[
            { label: t('catalogue.clientId'), cell: (c) => c.data.clientId },
            { label: t('catalogue.rev'), cell: (c) => c.rev, numeric: true },
            {
              label: t('catalogue.actions'),
              csv: () => null,
              cell: (c) => (
                <span class="row">
                  <button
                    type="button"
                    class="btn small"
                    data-testid={`client-secret-${c.id}`}
                    {...changeProps(form.busy)}
                    onClick={() => setRenew(c.id)}
                  >
                    {t('catalogue.newSecret')}
                  </button>
                  <ConfirmButton
                    label={t('catalogue.retire')}
                    confirm={t('catalogue.retireConfirm')}
                    busy={form.busy}
                    testid={`client-retire-${c.id}`}
                    onConfirm={() =>
                      void run(t('catalogue.clientWhat', { name: c.id }), () =>
                        hq.send('DELETE', `/clients/${enc(c.id)}`, undefined, { ifMatch: c.rev }),
                      )
                    }
                  />
                </span>
              ),
            },
          ]}
        />
        {renewing && (
          <SecretForm
            key={renewing.id}
            title={t('catalogue.newSecretFor', { name: renewing.id })}
            label={t('catalogue.secret')}
            pointer="/clientSecret"
            testid="client-secret-form"
            form={form}
            onCancel={() => setRenew(null)}
            onSubmit={(s) =>
              run(t('catalogue.clientWhat', { name: renewing.id }), () =>
                hq.send('PUT', `/clients/${enc(renewing.id)}`, { clientSecret: s }, { ifMatch: renewing.rev }),
              )
            }
          />
        )}
      </section>
      <form
        class="card"
        aria-labelledby="client-add-h"
        data-testid="client-add"
        onSubmit={(e) => {
          e.preventDefault();
          void add
            .run(t('catalogue.clientWhat', { name: clientId }), () =>
              hq.send('PUT', `/clients/${enc(clientId)}`, { clientSecret: secret }, { ifMatch: 0 }),
            )
            .then((ok) => {
              if (!ok) return;
              setClientId('');
              setSecret('');
            });
        }}
      >
        <h2 id="client-add-h">{t('catalogue.clientAdd')}</h2>
        <CreateError form={add.form} />
        <div class="form-grid">
          <Field label={t('catalogue.clientId')} error={add.form.fieldError('clientId')}>
            {(a) => (
              <input
                {...a}
                {...changeProps(add.form.busy)}
                required
                autocomplete="off"
                value={clientId}
                onInput={(e) => setClientId(inputValue(e).trim())}
              />
            )}
          </Field>
          <Field
            label={t('catalogue.secret')}
            error={add.form.fieldError('/clientSecret')}
            hint={t('catalogue.secretHint')}
          >
            {(a) => (
              <input
                {...a}
                {...changeProps(add.form.busy)}
                type="password"
                autocomplete="new-password"
                required
                value={secret}
                onInput={(e) => setSecret(inputValue(e))}
              />
            )}
          </Field>
        </div>
        <button type="submit" class="btn primary" {...changeProps(add.form.busy)}>
          {t('app.add')}
        </button>
      </form>
    </div>
  );
}

export function WarehousesView() {
  const warehouses = liveOf(useCatalogue(), 'warehouse').sort((a, b) => a.data.name.localeCompare(b.data.name));
  const { form, run } = useChange();
  const add = useChange();
  const [renaming, setRenaming] = useState<{ id: string; name: string } | null>(null);
  const [name, setName] = useState('');
  const row = warehouses.find((w) => w.id === renaming?.id);
  return (
    <div class="stack">
      <section class="card" aria-labelledby="warehouses-h">
        <h2 id="warehouses-h">{t('catalogue.warehouses')}</h2>
        <RowError form={form} />
        <DataTable
          csvName="warehouses"
          testid="warehouse-table"
          rows={warehouses}
          rowKey={(w) => w.id}
          columns={[
            { label: t('catalogue.name'), cell: (w) => w.data.name },
            { label: t('catalogue.id'), cell: (w) => <span class="mono">{w.id}</span>, csv: (w) => w.id },
            { label: t('catalogue.rev'), cell: (w) => w.rev, numeric: true },
            {
              label: t('catalogue.actions'),
              csv: () => null,
              cell: (w) => (
                <span class="row">
                  <button
                    type="button"
                    class="btn small"
                    data-testid={`warehouse-rename-${w.id}`}
                    {...changeProps(form.busy)}
                    onClick={() => setRenaming({ id: w.id, name: w.data.name })}
                  >
                    {t('catalogue.rename')}
                  </button>
                  <ConfirmButton
                    label={t('catalogue.retire')}
                    confirm={t('catalogue.retireConfirm')}
                    busy={form.busy}
                    testid={`warehouse-retire-${w.id}`}
                    onConfirm={() =>
                      void run(t('catalogue.warehouseWhat', { name: w.data.name }), () =>
                        hq.send('DELETE', `/warehouses/${w.id}`, undefined, { ifMatch: w.rev }),
                      )
                    }
                  />
                </span>
              ),
            },
          ]}
        />
        {renaming && row && (
          <form
            class="card inline-form"
            data-testid="warehouse-rename-form"
            onSubmit={(e) => {
              e.preventDefault();
              void run(t('catalogue.warehouseWhat', { name: renaming.name }), () =>
                hq.send('PUT', `/warehouses/${row.id}`, { name: renaming.name }, { ifMatch: row.rev }),
              ).then((ok) => ok && setRenaming(null));
            }}
          >
            <h3>{t('catalogue.renameTitle', { name: row.data.name })}</h3>
            <Field label={t('catalogue.name')} error={form.fieldError('/name')}>
              {(a) => (
                <input
                  {...a}
                  {...changeProps(form.busy)}
                  required
                  value={renaming.name}
                  onInput={(e) => setRenaming({ ...renaming, name: inputValue(e) })}
                />
              )}
            </Field>
            <div class="row">
              <button type="submit" class="btn primary" {...changeProps(form.busy)}>
                {t('app.save')}
              </button>
              <button type="button" class="btn ghost" onClick={() => setRenaming(null)}>
                {t('app.cancel')}
              </button>
            </div>
          </form>
        )}
      </section>
      <form
        class="card"
        aria-labelledby="warehouse-add-h"
        data-testid="warehouse-add"
        onSubmit={(e) => {
          e.preventDefault();
          void add
            .run(t('catalogue.warehouseWhat', { name }), () =>
              hq.send('PUT', `/warehouses/${newUuid()}`, { name }, { ifMatch: 0 }),
            )
            .then((ok) => ok && setName(''));
        }}
      >
        <h2 id="warehouse-add-h">{t('catalogue.warehouseAdd')}</h2>
        <CreateError form={add.form} />
        <Field label={t('catalogue.name')} error={add.form.fieldError('/name')}>
          {(a) => (
            <input
              {...a}
              {...changeProps(add.form.busy)}
              required
              value={name}
              onInput={(e) => setName(inputValue(e))}
            />
          )}
        </Field>
        <button type="submit" class="btn primary" {...changeProps(add.form.busy)}>
          {t('app.add')}
        </button>
      </form>
    </div>
  );
}
