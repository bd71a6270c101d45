import { useState } from 'preact/hooks';
import { newUuid } from '../../../api.js';
import { hq } from '../../api.js';
import { liveOf, useCatalogue } from '../../data.js';
import { Field, inputValue } from '../../form.js';
import { t } from '../../i18n.js';
import { DataTable } from '../../table.js';
import { CreateForm, RowError, useChange } from './account-forms.js';
import { ConfirmButton, changeProps } from './common.js';

/** The warehouses the boxes stock from (docs/sync.md "Down: the catalogue"): added, renamed, retired. */
export function WarehousesView() {
  const warehouses = liveOf(useCatalogue(), 'warehouse').sort((a, b) => a.data.name.localeCompare(b.data.name));
  const { form, run } = useChange();
  const [renaming, setRenaming] = useState<{ id: string; name: string } | null>(null);
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
      <CreateForm
        testid="warehouse-add"
        titleId="warehouse-add-h"
        title={t('catalogue.warehouseAdd')}
        fields={[{ key: 'name', label: t('catalogue.name'), error: '/name', kind: 'text' }]}
        what={(v) => t('catalogue.warehouseWhat', { name: v.name! })}
        send={(v) => hq.send('PUT', `/warehouses/${newUuid()}`, { name: v.name }, { ifMatch: 0 })}
      />
    </div>
  );
}
