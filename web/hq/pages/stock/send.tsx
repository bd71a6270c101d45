import { useState } from 'preact/hooks';
import type { HqDocumentBody } from '../../../../src/shared/hq-inbox.js';
import { hq } from '../../api.js';
import { liveOf, useCatalogue } from '../../data.js';
import { Field, FormError, inputValue, useApiForm } from '../../form.js';
import { dateTime, t } from '../../i18n.js';
import { VenuePicker } from '../../pickers.js';
import type { Column } from '../../table.js';
import { ReadOnlyNote } from '../../ui.js';
import { EntriesTable, EntryBadge, useEntryWatch } from '../orders/entries.js';
import { codesText, type InboxEntry } from '../orders/types.js';
import { useWarehouseName } from './documents.js';

/** The kinds headquarters sends (docs/sync.md "Documents from headquarters"): a transfer, a count sheet, a receipt. */
const KINDS = ['MM', 'Inventory', 'PZ'] as const;
type Kind = (typeof KINDS)[number];

interface ItemRow {
  id: string;
  unit: string;
  /** As typed: the box's rules (checked at the central) refuse what does not fit, by the line's pointer. */
  qty: string;
}
const emptyRow = (): ItemRow => ({ id: '', unit: '', qty: '' });

/**
 * A stock document for a venue's box (POST /hq-api/api/venues/:venueId/documents): an MM from another warehouse
 * (the central one) into the venue's, a count sheet (Inventory) or a receipt (PZ) of the venue's warehouse. Its
 * id is made here and kept until the central took it, so sending again after a lost answer is the same document.
 */
export function SendDocument(props: { venue: string; onVenue: (id: string) => void }) {
  const catalogue = useCatalogue();
  const warehouseName = useWarehouseName();
  const canWrite = hq.canWrite();
  const form = useApiForm();
  const venueRow = liveOf(catalogue, 'venue').find((v) => v.id === props.venue);
  const venueWarehouse = venueRow?.data.warehouse ?? '';
  const others = liveOf(catalogue, 'warehouse').filter((w) => w.id !== venueWarehouse);
  const [kind, setKind] = useState<Kind>('MM');
  const [source, setSource] = useState('');
  const from = source || others[0]?.id || '';
  const [number, setNumber] = useState('');
  const [rows, setRows] = useState<ItemRow[]>([emptyRow()]);
  const [docId, setDocId] = useState(() => crypto.randomUUID());
  const [sent, setSent] = useState<InboxEntry | null>(null);
  const watch = useEntryWatch(sent);

  const setRow = (i: number, k: keyof ItemRow) => (e: Event) => {
    const v = inputValue(e);
    setRows((rs) => rs.map((r, j) => (j === i ? { ...r, [k]: v } : r)));
  };

  const submit = () => {
    const body: HqDocumentBody = {
      id: docId,
      kind,
      warehouse: kind === 'MM' ? from : venueWarehouse,
      ...(kind === 'MM' ? { targetWarehouse: venueWarehouse } : {}),
      ...(number.trim() ? { number: number.trim() } : {}),
      // An empty quantity goes as null: the central names the line's field (a number is needed).
      items: rows.map((r) => ({
        id: r.id.trim(),
        unit: r.unit.trim(),
        qty: r.qty.trim() === '' ? NaN : Number(r.qty),
      })),
    };
    void form.run(async () => {
      const entry = await hq.send<InboxEntry>('POST', `/venues/${encodeURIComponent(props.venue)}/documents`, body);
      setSent(entry);
      setRows([emptyRow()]);
      setNumber('');
      setDocId(crypto.randomUUID());
    });
  };

  return (
    <section aria-labelledby="send-doc-h">
      <h2 id="send-doc-h">{t('stock.send')}</h2>
      {!canWrite && <ReadOnlyNote />}
      <form
        class="card"
        data-testid="send-document"
        onSubmit={(e) => {
          e.preventDefault();
          submit();
        }}
      >
        <fieldset class="plain" disabled={!canWrite || form.busy}>
          <legend class="sr-only">{t('stock.send')}</legend>
          <FormError form={form} />
          <div class="form-grid">
            <Field label={t('app.venue')}>
              {(a) => <VenuePicker input={a} value={props.venue} onChange={props.onVenue} />}
            </Field>
            <Field label={t('stock.kind')} error={form.fieldError('/kind')}>
              {(a) => (
                <select
                  {...a}
                  name="kind"
                  data-testid="document-kind"
                  value={kind}
                  onChange={(e) => setKind(inputValue(e) as Kind)}
                >
                  {KINDS.map((k) => (
                    <option key={k} value={k}>
                      {t(`stock.kind.${k}`)}
                    </option>
                  ))}
                </select>
              )}
            </Field>
            {kind === 'MM' ? (
              <Field label={t('stock.source')} error={form.fieldError('/warehouse')}>
                {(a) => (
                  <select
                    {...a}
                    name="warehouse"
                    data-testid="document-source"
                    value={from}
                    onChange={(e) => setSource(inputValue(e))}
                  >
                    {others.map((w) => (
                      <option key={w.id} value={w.id}>
                        {w.data.name}
                      </option>
                    ))}
                  </select>
                )}
              </Field>
            ) : null}
            <Field
              label={kind === 'MM' ? t('stock.target') : t('stock.warehouse')}
              error={form.fieldError(kind === 'MM' ? '/targetWarehouse' : '/warehouse')}
            >
              {(a) => <input {...a} readOnly value={warehouseName(venueWarehouse)} />}
            </Field>
            <Field label={t('stock.number')} error={form.fieldError('/number')} hint={t('stock.numberHint')}>
              {(a) => <input {...a} name="number" value={number} onInput={(e) => setNumber(inputValue(e))} />}
            </Field>
          </div>
          <table class="data stock-items" data-testid="document-items-editor">
            <caption class="sr-only">{t('stock.items')}</caption>
            <thead>
              <tr>
                <th scope="col">{t('stock.item')}</th>
                <th scope="col">{t('stock.unit')}</th>
                <th scope="col">{kind === 'Inventory' ? t('stock.counted') : t('stock.qty')}</th>
                <th scope="col">
                  <span class="sr-only">{t('app.remove')}</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r, i) => (
                <tr key={i}>
                  <td>
                    <Field
                      label={t('stock.itemOf', { n: i + 1 })}
                      class="compact"
                      error={form.fieldError(`/items/${i}/id`)}
                    >
                      {(a) => <input {...a} data-testid={`item-id-${i}`} value={r.id} onInput={setRow(i, 'id')} />}
                    </Field>
                  </td>
                  <td>
                    <Field
                      label={t('stock.unitOf', { n: i + 1 })}
                      class="compact"
                      error={form.fieldError(`/items/${i}/unit`)}
                    >
                      {(a) => (
                        <input {...a} data-testid={`item-unit-${i}`} value={r.unit} onInput={setRow(i, 'unit')} />
                      )}
                    </Field>
                  </td>
                  <td>
                    <Field
                      label={t('stock.qtyOf', { n: i + 1 })}
                      class="compact"
                      error={form.fieldError(`/items/${i}/qty`) ?? form.fieldError(`/items/${i}`)}
                    >
                      {(a) => (
                        <input
                          {...a}
                          type="number"
                          step="any"
                          data-testid={`item-qty-${i}`}
                          value={r.qty}
                          onInput={setRow(i, 'qty')}
                        />
                      )}
                    </Field>
                  </td>
                  <td>
                    <button
                      type="button"
                      class="btn small"
                      aria-label={t('stock.removeLine', { n: i + 1 })}
                      disabled={rows.length === 1}
                      onClick={() => setRows((rs) => rs.filter((_, j) => j !== i))}
                    >
                      {t('app.remove')}
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {form.fieldError('/items') && <p class="field-error">{form.fieldError('/items')}</p>}
          <div class="row">
            <button type="button" class="btn" data-testid="item-add" onClick={() => setRows([...rows, emptyRow()])}>
              {t('stock.addLine')}
            </button>
            <button type="submit" class="btn primary" data-testid="send-document-submit">
              {t('stock.sendButton')}
            </button>
          </div>
        </fieldset>
      </form>
      {watch.entry && (
        <div class="card" role="status" aria-live="polite" data-testid="sent-document">
          <p>
            {t('stock.sentAs', { id: watch.entry.id.slice(0, 8) })} <EntryBadge entry={watch.entry} />
          </p>
          {watch.entry.status === 'rejected' && <p data-testid="sent-codes">{codesText(watch.entry.codes)}</p>}
        </div>
      )}
      <VenueDocuments venue={props.venue} lastSent={sent?.id} />
    </section>
  );
}

/** The documents headquarters sent the venue's box (GET /hq-api/api/inbox?venueId=, kind document) and their state. */
function VenueDocuments(props: { venue: string; lastSent?: string }) {
  const warehouseName = useWarehouseName();
  const body = (e: InboxEntry) => e.body as Partial<HqDocumentBody>;
  const columns: Column<InboxEntry>[] = [
    { label: t('stock.created'), cell: (e) => dateTime(e.createdAt), csv: (e) => e.createdAt },
    {
      label: t('stock.kind'),
      cell: (e) => t(`stock.kind.${body(e).kind ?? ''}`),
      csv: (e) => body(e).kind ?? '',
    },
    { label: t('stock.number'), cell: (e) => body(e).number ?? '' },
    { label: t('stock.warehouse'), cell: (e) => warehouseName(body(e).warehouse), csv: (e) => body(e).warehouse ?? '' },
    { label: t('stock.lines'), cell: (e) => body(e).items?.length ?? 0, numeric: true },
    { label: t('stock.state'), cell: (e) => <EntryBadge entry={e} />, csv: (e) => e.status },
    { label: t('stock.codes'), cell: (e) => codesText(e.codes) },
    { label: t('stock.id'), cell: (e) => <span class="mono">{e.id.slice(0, 8)}</span>, csv: (e) => e.id },
  ];
  return (
    <EntriesTable
      kind="document"
      venueId={props.venue}
      lastSent={props.lastSent}
      columns={columns}
      csvName="dokumenty-centrali"
      caption={t('stock.sentTable')}
      testid="sent-documents"
    />
  );
}
