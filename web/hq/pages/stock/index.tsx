import { useState } from 'preact/hooks';
import { navigate, route } from '../../../router.js';
import { useStore } from '../../../store.js';
import { withQuery } from '../../api.js';
import { liveOf, useCatalogue } from '../../data.js';
import { Field } from '../../form.js';
import { t } from '../../i18n.js';
import { SubNav } from '../../ui.js';
import { Balances, Documents, DocumentView, documentLink } from './documents.js';
import { SendDocument } from './send.js';
import type { StockDocument } from './types.js';

/**
 * The stock page (docs/console.md "Pages"): per warehouse of the catalogue, its balances and documents as the boxes
 * sent them up (`/stock?warehouse=W`, a document at `&doc=ID`), and documents sent down to a venue's box
 * (`/stock?tab=send&venue=V`) with what became of them.
 */
export function StockPage() {
  const { query } = useStore(route);
  const catalogue = useCatalogue();
  const warehouses = liveOf(catalogue, 'warehouse').sort((a, b) => a.data.name.localeCompare(b.data.name));
  const venues = liveOf(catalogue, 'venue');
  const warehouse = query.get('warehouse') || warehouses[0]?.id || '';
  const doc = query.get('doc');
  const tab = query.get('tab') === 'send' ? 'send' : 'stock';
  // The list's copy of the opened document, shown while the central lacks the document's own route.
  const [opened, setOpened] = useState<StockDocument | undefined>(undefined);
  const go = (q: Record<string, string | undefined>) => navigate(withQuery('/stock', q));

  if (doc && warehouse)
    return <DocumentView warehouse={warehouse} id={doc} fromList={opened?.id === doc ? opened : undefined} />;

  const venueOfWarehouse = venues.find((v) => v.data.warehouse === warehouse)?.id;
  const venue = query.get('venue') || venueOfWarehouse || venues[0]?.id || '';
  return (
    <div class="pad" data-testid="stock-page">
      <h1>{t('nav.stock')}</h1>
      <SubNav
        items={[
          { id: 'stock', label: t('stock.tab.stock') },
          { id: 'send', label: t('stock.tab.send') },
        ]}
        current={tab}
        onSelect={(next) => go(next === 'send' ? { tab: 'send', venue } : { warehouse })}
      />
      {tab === 'send' ? (
        <SendDocument venue={venue} onVenue={(v) => go({ tab: 'send', venue: v })} />
      ) : (
        <>
          <div class="row">
            <Field label={t('stock.warehouse')}>
              {(a) => (
                <select
                  {...a}
                  data-testid="warehouse-picker"
                  value={warehouse}
                  onChange={(e) => go({ warehouse: (e.currentTarget as HTMLSelectElement).value })}
                >
                  {warehouses.map((w) => (
                    <option key={w.id} value={w.id}>
                      {w.data.name}
                    </option>
                  ))}
                </select>
              )}
            </Field>
          </div>
          {warehouse ? (
            <div class="stock-columns">
              <Balances warehouse={warehouse} />
              <Documents
                warehouse={warehouse}
                onOpen={(d) => {
                  setOpened(d);
                  navigate(documentLink(warehouse, d.id));
                }}
              />
            </div>
          ) : (
            <p class="muted">{t('stock.noWarehouses')}</p>
          )}
        </>
      )}
    </div>
  );
}
