import { useEffect, useState } from 'preact/hooks';
import { ApiError } from '../../../http.js';
import { navigate } from '../../../router.js';
import { hq } from '../../api.js';
import { liveOf, useCatalogue } from '../../data.js';
import { dateTime, number, t } from '../../i18n.js';
import { useDeviceName } from '../orders/devices.js';
import { type Column, DataTable } from '../../table.js';
import { Loaded, useLoad } from '../../ui.js';
import type { DocumentsPage, DocumentWithLedger, StockBalances, StockDocument } from './types.js';

/** The warehouse's name from the catalogue (its id while loading, or for one the catalogue no longer has). */
export function useWarehouseName(): (id: string | undefined) => string {
  const warehouses = liveOf(useCatalogue(), 'warehouse');
  return (id) => (id ? (warehouses.find((w) => w.id === id)?.data.name ?? id) : '–');
}

export const documentLink = (warehouse: string, id: string) =>
  `/stock?warehouse=${encodeURIComponent(warehouse)}&doc=${encodeURIComponent(id)}`;

/** The warehouse's balances as the central holds them (its boxes' ledgers; locks stay on the boxes). */
export function Balances(props: { warehouse: string }) {
  const state = useLoad(() => hq.get<StockBalances>('/stock', { warehouseId: props.warehouse }), [props.warehouse]);
  type Row = StockBalances['items'][number];
  const columns: Column<Row>[] = [
    { label: t('stock.item'), cell: (r) => r.id },
    { label: t('stock.unit'), cell: (r) => r.unit },
    { label: t('stock.qty'), cell: (r) => number(r.qty, 6), csv: (r) => r.qty, numeric: true },
    { label: t('stock.available'), cell: (r) => number(r.available, 6), csv: (r) => r.available, numeric: true },
  ];
  return (
    <section aria-labelledby="stock-balances-h">
      <div class="row spread">
        <h2 id="stock-balances-h">{t('stock.balances')}</h2>
        <button type="button" class="btn small" onClick={state.reload}>
          {t('stock.refresh')}
        </button>
      </div>
      <Loaded state={state}>
        {(b) => (
          <DataTable
            columns={columns}
            rows={b.items}
            csvName={`stan-${props.warehouse.slice(0, 8)}`}
            rowKey={(r) => `${r.id}/${r.unit}`}
            testid="stock-balances"
          />
        )}
      </Loaded>
    </section>
  );
}

/** The warehouse's documents, newest first, a page at a time (the list's cursor). */
export function Documents(props: { warehouse: string; onOpen: (d: StockDocument) => void }) {
  const warehouseName = useWarehouseName();
  const [pages, setPages] = useState<{ items: StockDocument[]; next: string | null } | null>(null);
  const [error, setError] = useState<unknown>(undefined);
  const load = (after?: string) =>
    hq.get<DocumentsPage>('/stock-documents', { warehouseId: props.warehouse, after, limit: 50 }).then(
      (p) => {
        setError(undefined);
        setPages((was) => ({ items: after && was ? [...was.items, ...p.items] : p.items, next: p.next }));
      },
      (err: unknown) => setError(err),
    );
  useEffect(() => {
    setPages(null);
    void load();
  }, [props.warehouse]);
  const columns: Column<StockDocument>[] = [
    { label: t('stock.created'), cell: (d) => dateTime(d.created), csv: (d) => d.created },
    { label: t('stock.kind'), cell: (d) => t(`stock.kind.${d.kind}`), csv: (d) => d.kind },
    {
      label: t('stock.number'),
      cell: (d) => (
        <a
          href={documentLink(props.warehouse, d.id)}
          data-testid="document-link"
          onClick={(e) => {
            // The row opens it too: one history entry, not two.
            e.preventDefault();
            e.stopPropagation();
            props.onOpen(d);
          }}
        >
          {d.number}
        </a>
      ),
      csv: (d) => d.number,
    },
    { label: t('stock.target'), cell: (d) => (d.targetWarehouse ? warehouseName(d.targetWarehouse) : '') },
    { label: t('stock.lines'), cell: (d) => d.items?.length ?? 0, numeric: true },
    { label: t('stock.user'), cell: (d) => d.user ?? '' },
    {
      label: t('stock.device'),
      cell: (d) => <span class="mono">{d.deviceId.slice(0, 8)}</span>,
      csv: (d) => d.deviceId,
    },
  ];
  return (
    <section aria-labelledby="stock-docs-h">
      <div class="row spread">
        <h2 id="stock-docs-h">{t('stock.documents')}</h2>
        <button type="button" class="btn small" onClick={() => void load()}>
          {t('stock.refresh')}
        </button>
      </div>
      <p class="muted small">{t('stock.mmNote')}</p>
      <Loaded state={{ value: pages ?? undefined, error, loading: pages === null, reload: () => void load() }}>
        {(p) => (
          <>
            <DataTable
              columns={columns}
              rows={p.items}
              csvName={`dokumenty-${props.warehouse.slice(0, 8)}`}
              rowKey={(d) => d.id}
              onRow={props.onOpen}
              testid="stock-documents"
            />
            {p.next && (
              <button type="button" class="btn" data-testid="documents-more" onClick={() => void load(p.next!)}>
                {t('app.more')}
              </button>
            )}
          </>
        )}
      </Loaded>
    </section>
  );
}

/**
 * One document with its ledger rows (GET /hq-api/api/stock-documents/:id). Where the central does not have that
 * route yet (404 of the route, not of the document) the list's copy is shown, without its ledger.
 */
export function DocumentView(props: { warehouse: string; id: string; fromList?: StockDocument }) {
  const warehouseName = useWarehouseName();
  const deviceName = useDeviceName();
  const state = useLoad<DocumentWithLedger | StockDocument>(
    () =>
      hq.get<DocumentWithLedger>(`/stock-documents/${encodeURIComponent(props.id)}`).catch((err: unknown) => {
        if (err instanceof ApiError && err.status === 404 && props.fromList) return props.fromList;
        throw err;
      }),
    [props.id],
  );
  type Item = NonNullable<StockDocument['items']>[number];
  type Ledger = DocumentWithLedger['ledger'][number];
  const itemColumns: Column<Item>[] = [
    { label: t('stock.item'), cell: (i) => i.id },
    { label: t('stock.unit'), cell: (i) => i.unit },
    { label: t('stock.qty'), cell: (i) => number(i.qty, 6), csv: (i) => i.qty, numeric: true },
    {
      label: t('stock.unitPrice'),
      cell: (i) => number(i.unitPrice, 2),
      csv: (i) => i.unitPrice ?? null,
      numeric: true,
    },
  ];
  const ledgerColumns: Column<Ledger>[] = [
    { label: t('stock.warehouse'), cell: (l) => warehouseName(l.warehouseId), csv: (l) => l.warehouseId },
    { label: t('stock.line'), cell: (l) => l.line + 1, csv: (l) => l.line, numeric: true },
    { label: t('stock.item'), cell: (l) => l.itemId },
    { label: t('stock.unit'), cell: (l) => l.unit },
    { label: t('stock.delta'), cell: (l) => number(l.delta, 6), csv: (l) => l.delta, numeric: true },
  ];
  return (
    <div data-testid="document-view">
      <div class="row spread">
        <h1>{t('stock.documentTitle')}</h1>
        <button
          type="button"
          class="btn"
          onClick={() => navigate(`/stock?warehouse=${encodeURIComponent(props.warehouse)}`)}
        >
          {t('stock.back')}
        </button>
      </div>
      <Loaded state={state}>
        {(d) => (
          <>
            <section class="card" aria-labelledby="doc-facts-h">
              <h2 id="doc-facts-h">
                {t(`stock.kind.${d.kind}`)} {d.number}
              </h2>
              <dl class="orders-facts">
                <dt>{t('stock.warehouse')}</dt>
                <dd>{warehouseName(d.warehouse)}</dd>
                {d.targetWarehouse && (
                  <>
                    <dt>{t('stock.target')}</dt>
                    <dd>{warehouseName(d.targetWarehouse)}</dd>
                  </>
                )}
                <dt>{t('stock.created')}</dt>
                <dd>{dateTime(d.created)}</dd>
                <dt>{t('stock.user')}</dt>
                <dd>{d.user ?? '–'}</dd>
                <dt>{t('stock.device')}</dt>
                <dd>{deviceName(d.deviceId)}</dd>
              </dl>
              <p class="mono muted">{d.id}</p>
            </section>
            <section class="card" aria-labelledby="doc-items-h">
              <h2 id="doc-items-h">{t('stock.items')}</h2>
              <DataTable
                columns={itemColumns}
                rows={d.items ?? []}
                csvName={`dokument-${d.number}`}
                rowKey={(_, i) => String(i)}
                testid="document-items"
              />
            </section>
            <section class="card" aria-labelledby="doc-ledger-h">
              <h2 id="doc-ledger-h">{t('stock.ledger')}</h2>
              {'ledger' in d ? (
                <DataTable
                  columns={ledgerColumns}
                  rows={d.ledger}
                  csvName={`ksiegowanie-${d.number}`}
                  rowKey={(l) => `${l.warehouseId}/${l.line}`}
                  testid="document-ledger"
                />
              ) : (
                <p class="muted">{t('stock.noLedger')}</p>
              )}
            </section>
          </>
        )}
      </Loaded>
    </div>
  );
}
