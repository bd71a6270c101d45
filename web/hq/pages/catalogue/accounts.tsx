import { useState } from 'preact/hooks';
import { hq } from '../../api.js';
import { liveOf, useCatalogue } from '../../data.js';
import { t } from '../../i18n.js';
import { DataTable } from '../../table.js';
import { CreateForm, RowError, SecretForm, useChange } from './account-forms.js';
import { ConfirmButton, changeProps } from './common.js';

/** The boxes' staff users and OAuth clients (docs/sync.md "Down: the catalogue"); warehouses: warehouses.tsx. */
const enc = encodeURIComponent;

export function StaffView() {
  const users = liveOf(useCatalogue(), 'user').sort((a, b) => a.data.username.localeCompare(b.data.username));
  const { form, run } = useChange();
  const [renew, setRenew] = useState<string | null>(null);
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
      <CreateForm
        testid="staff-add"
        titleId="staff-add-h"
        title={t('catalogue.staffAdd')}
        fields={[
          { key: 'username', label: t('catalogue.username'), error: 'username', kind: 'id' },
          { key: 'password', label: t('catalogue.password'), error: '/password', kind: 'secret' },
          {
            key: 'scope',
            label: t('catalogue.scope'),
            error: '/scope',
            kind: 'choice',
            initial: 'read write',
            options: [
              { value: 'read write', label: t('catalogue.scope.read write') },
              { value: 'read', label: t('catalogue.scope.read') },
            ],
          },
        ]}
        what={(v) => t('catalogue.staffWhat', { name: v.username! })}
        send={(v) =>
          hq.send('PUT', `/staff-users/${enc(v.username!)}`, { password: v.password, scope: v.scope }, { ifMatch: 0 })
        }
      />
    </div>
  );
}

export function ClientsView() {
  const clients = liveOf(useCatalogue(), 'client').sort((a, b) => a.id.localeCompare(b.id));
  const { form, run } = useChange();
  const [renew, setRenew] = useState<string | null>(null);
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
      <CreateForm
        testid="client-add"
        titleId="client-add-h"
        title={t('catalogue.clientAdd')}
        fields={[
          { key: 'clientId', label: t('catalogue.clientId'), error: 'clientId', kind: 'id' },
          { key: 'secret', label: t('catalogue.secret'), error: '/clientSecret', kind: 'secret' },
        ]}
        what={(v) => t('catalogue.clientWhat', { name: v.clientId! })}
        send={(v) => hq.send('PUT', `/clients/${enc(v.clientId!)}`, { clientSecret: v.secret }, { ifMatch: 0 })}
      />
    </div>
  );
}
