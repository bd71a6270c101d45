import { useState } from 'preact/hooks';
import { hq } from '../../api.js';
import { liveOf, loadCatalogue, useCatalogue, venuesOf } from '../../data.js';
import { showError } from '../../ui.js';
import { Field, inputValue, useApiForm } from '../../form.js';
import { t } from '../../i18n.js';
import { DataTable } from '../../table.js';
import { type ChangeAnswer, ConfirmButton, changed, changeProps, SaveError } from './common.js';
import { type Category, isProduct, type MenuNode, type Product } from './menu-tree.js';
import { VenuePicker } from '../../pickers.js';

function productsOf(node: MenuNode): Product[] {
  return isProduct(node) ? [node] : node.items.flatMap(productsOf);
}

/**
 * Headquarters' sold-out flags per venue (PUT/DELETE /hq-api/api/sold-out/:venueId/:productId): a product of the
 * venue's menu marked sold out with a reason, or cleared. The box's own staff flag is the box's and not shown here.
 */
export function SoldOutView(props: { id: string; select: (id: string) => void }) {
  const catalogue = useCatalogue();
  const venues = venuesOf(catalogue);
  const venueId = venues.some((v) => v.id === props.id) ? props.id : (venues[0]?.id ?? '');
  const venue = liveOf(catalogue, 'venue').find((v) => v.id === venueId);
  const menu = liveOf(catalogue, 'menu').find((m) => m.id === venue?.data.menu);
  const products = menu ? productsOf(menu.data.root as Category) : [];
  const nameOf = (id: string) => products.find((p) => p.id === id)?.details.literals.name || id;
  const flags = liveOf(catalogue, 'soldOut').filter((f) => f.data.venue === venueId);
  const rows = useApiForm();
  const add = useApiForm();
  const [productId, setProductId] = useState('');
  const [reason, setReason] = useState('');
  const chosen = products.some((p) => p.id === productId) ? productId : (products[0]?.id ?? '');
  const flagOf = (id: string) => flags.find((f) => f.data.productId === id);
  return (
    <div class="stack">
      <section class="card" aria-labelledby="soldout-h">
        <h2 id="soldout-h">{t('catalogue.soldOut')}</h2>
        <p class="muted">{t('catalogue.soldOutNote')}</p>
        <Field label={t('app.venue')}>
          {(a) => <VenuePicker input={a} testid="soldout-venue" value={venueId} onChange={props.select} />}
        </Field>
        <SaveError form={rows} onLoadCurrent={() => void loadCatalogue(true).catch(showError)} />
        <DataTable
          csvName="sold-out"
          testid="soldout-table"
          rows={flags}
          rowKey={(f) => f.id}
          columns={[
            { label: t('catalogue.product'), cell: (f) => nameOf(f.data.productId), csv: (f) => f.data.productId },
            { label: t('catalogue.reason'), cell: (f) => f.data.reason || '–', csv: (f) => f.data.reason },
            { label: t('catalogue.rev'), cell: (f) => f.rev, numeric: true },
            {
              label: t('catalogue.actions'),
              csv: () => null,
              cell: (f) => (
                <ConfirmButton
                  label={t('catalogue.soldOutClear')}
                  confirm={t('catalogue.soldOutClearConfirm')}
                  busy={rows.busy}
                  testid={`soldout-clear-${f.data.productId}`}
                  onConfirm={() =>
                    void rows.run(async () => {
                      const answer = await hq.send<ChangeAnswer>(
                        'DELETE',
                        `/sold-out/${venueId}/${encodeURIComponent(f.data.productId)}`,
                        undefined,
                        { ifMatch: f.rev },
                      );
                      await changed(answer, t('catalogue.soldOutWhat', { name: nameOf(f.data.productId) }));
                    })
                  }
                />
              ),
            },
          ]}
        />
      </section>
      <form
        class="card"
        aria-labelledby="soldout-add-h"
        data-testid="soldout-add"
        onSubmit={(e) => {
          e.preventDefault();
          const flag = flagOf(chosen);
          void add
            .run(async () => {
              const answer = await hq.send<ChangeAnswer>(
                'PUT',
                `/sold-out/${venueId}/${encodeURIComponent(chosen)}`,
                { reason },
                { ifMatch: flag?.rev ?? 0 },
              );
              await changed(answer, t('catalogue.soldOutWhat', { name: nameOf(chosen) }));
            })
            .then((ok) => ok && setReason(''));
        }}
      >
        <h2 id="soldout-add-h">{t('catalogue.soldOutSet')}</h2>
        <SaveError form={add} onLoadCurrent={() => void loadCatalogue(true).catch(showError)} />
        <div class="form-grid">
          <Field label={t('catalogue.product')}>
            {(a) => (
              <select
                {...a}
                {...changeProps(add.busy)}
                data-testid="soldout-product"
                value={chosen}
                onChange={(e) => setProductId((e.currentTarget as HTMLSelectElement).value)}
              >
                {products.map((p) => (
                  <option key={p.id} value={p.id}>
                    {p.details.literals.name || p.id}
                    {flagOf(p.id) ? ` (${t('catalogue.soldOutAlready')})` : ''}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field label={t('catalogue.reason')} error={add.fieldError('/reason')}>
            {(a) => (
              <input
                {...a}
                {...changeProps(add.busy)}
                data-testid="soldout-reason"
                maxLength={500}
                value={reason}
                onInput={(e) => setReason(inputValue(e))}
              />
            )}
          </Field>
        </div>
        <button
          type="submit"
          class="btn primary"
          data-testid="soldout-save"
          {...changeProps(add.busy)}
          disabled={add.busy || !hq.canWrite() || !chosen}
        >
          {t('catalogue.soldOutSet')}
        </button>
      </form>
    </div>
  );
}
