import { useEffect, useState } from 'preact/hooks';
import { bootstrap, staff } from '../api.js';
import type { VenueFeed } from '../feed.js';
import { dateTime, money, timeOfDay } from '../format.js';
import { language, t } from '../i18n.js';
import { type Menu, productsOf, type Venue } from '../model.js';
import { useStore } from '../store.js';
import { Action, LoadError, showToast } from '../ui.js';
import { StandbyPanel, StandbyWarning } from './standby.js';

const PARTS = ['products', 'printers', 'stock', 'sync'] as const;
type Part = (typeof PARTS)[number];

/** Manager: sold-out flags, printers, the venue warehouse's stock and documents, sync and standby status. */
export function Manager(props: { feed: VenueFeed; venue: Venue }) {
  const [part, setPart] = useState<Part>((sessionStorage.getItem('vb.managerPart') as Part | null) ?? 'products');
  const choose = (p: Part) => {
    sessionStorage.setItem('vb.managerPart', p);
    setPart(p);
  };
  const labels: Record<Part, string> = {
    products: t('products'),
    printers: t('printers'),
    stock: t('stock'),
    sync: t('sync'),
  };
  return (
    <section class="manager">
      {part !== 'sync' && <StandbyWarning />}
      <nav class="sub-nav" aria-label={t('managerParts')}>
        {PARTS.map((p) => (
          <button
            type="button"
            key={p}
            data-testid={`manager-${p}`}
            aria-pressed={p === part}
            class={`btn ${p === part ? 'primary' : 'ghost'}`}
            onClick={() => choose(p)}
          >
            {labels[p]}
          </button>
        ))}
      </nav>
      {part === 'products' && <SoldOut feed={props.feed} venue={props.venue} />}
      {part === 'printers' && <Printers feed={props.feed} venue={props.venue} />}
      {part === 'stock' && <Stock venue={props.venue} />}
      {part === 'sync' && (
        <>
          <SyncStatus timeZone={props.venue.timeZone} />
          <StandbyPanel timeZone={props.venue.timeZone} />
        </>
      )}
    </section>
  );
}

/** Products of every channel's menu with the venue's sold-out flag (PUT .../locks). */
function SoldOut(props: { feed: VenueFeed; venue: Venue }) {
  useStore(language);
  const menuChanges = useStore(props.feed.menuEvents);
  const [products, setProducts] = useState<ReturnType<typeof productsOf> | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [reason, setReason] = useState('');
  const load = async () => {
    setError(null);
    try {
      const seen = new Map<string, ReturnType<typeof productsOf>[number]>();
      for (const channel of ['DINE_IN', 'TAKE_AWAY', 'DELIVERY']) {
        const menu = await staff.call<Menu>(
          'GET',
          `/menu-api/api/menu/${encodeURIComponent(props.venue.menu)}?channel=${channel}&instance=${props.venue.id}`,
        );
        for (const p of productsOf(menu.root)) if (!seen.has(p.product.id)) seen.set(p.product.id, p);
      }
      setProducts([...seen.values()]);
    } catch (err) {
      setError(err);
    }
  };
  useEffect(() => void load(), [props.venue.id, menuChanges]);
  if (error) return <LoadError error={error} retry={() => void load()} />;
  if (!products) return <p class="muted">{t('loading')}</p>;
  return (
    <div class="card">
      <label>
        {t('reason')}{' '}
        <input value={reason} maxLength={200} onInput={(e) => setReason((e.currentTarget as HTMLInputElement).value)} />
      </label>
      <table class="list">
        <tbody>
          {products.map(({ product, category }) => (
            <tr key={product.id} data-testid="product-row" data-product={product.id}>
              <td>
                {product.details.literals.name ?? product.id}
                <div class="muted small">{category}</div>
              </td>
              <td>{money(product.price)}</td>
              <td>
                <Action
                  class={`btn toggle ${product.soldOut ? 'danger' : 'ok'}`}
                  testid="sold-out-toggle"
                  onRun={async () => {
                    await staff.call('PUT', `/menu-api/api/menu/${encodeURIComponent(props.venue.menu)}/locks`, {
                      venue: props.venue.id,
                      productId: product.id,
                      locked: !product.soldOut,
                      ...(!product.soldOut && reason.trim() ? { reason: reason.trim() } : {}),
                    });
                    await load();
                  }}
                >
                  {product.soldOut ? t('soldOut') : t('available')}
                </Action>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

interface Printer {
  name: string;
  venue: string;
  role: string;
  status: string;
  statusSince: string | null;
  divertedTo: string | null;
  queueDepth: number;
  lastError: { reason: string; message: string; at: string } | null;
}

interface PrintJob {
  id: string;
  kind: string;
  round: number;
  state: string;
  created: string;
  attempts: number;
  orderId: string | null;
}

/** Printers of the venue: status, queue, recent jobs and reprint. Updated by PRINTER_STATUS frames. */
function Printers(props: { feed: VenueFeed; venue: Venue }) {
  const statusFrame = useStore(props.feed.printerEvents);
  const [printers, setPrinters] = useState<Printer[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [jobsOf, setJobsOf] = useState<string | null>(null);
  const [jobs, setJobs] = useState<PrintJob[]>([]);
  const load = () =>
    staff.call<{ items: Printer[] }>('GET', '/printing-api/api/printers').then((r) => {
      setError(null);
      setPrinters(r.items.filter((p) => p.venue === props.venue.id));
    }, setError);
  const loadJobs = (name: string) =>
    staff
      .call<{ items: PrintJob[] }>('GET', `/printing-api/api/jobs?printer=${encodeURIComponent(name)}&limit=20`)
      .then((r) => setJobs(r.items), setError);
  useEffect(() => {
    void load();
    const timer = setInterval(() => void load(), 10_000);
    return () => clearInterval(timer);
  }, [props.venue.id, statusFrame]);
  useEffect(() => {
    if (jobsOf) void loadJobs(jobsOf);
  }, [jobsOf, statusFrame]);
  if (error && !printers) return <LoadError error={error} retry={() => void load()} />;
  if (!printers) return <p class="muted">{t('loading')}</p>;
  if (printers.length === 0) return <p class="empty">{t('none')}</p>;
  return (
    <div class="printers">
      {printers.map((p) => (
        <div
          key={p.name}
          class={`card printer ${p.status}`}
          data-testid="printer"
          data-printer={p.name}
          data-status={p.status}
        >
          <h2>
            {p.name}{' '}
            <small class="muted" data-testid="printer-role">
              {t(`printerRole.${p.role}`)}
            </small>
          </h2>
          <p>
            <span class={`badge printer-${p.status}`} data-testid="printer-status">
              {t(`printer.${p.status}`)}
            </span>{' '}
            {t('queue')}: <b data-testid="queue-depth">{p.queueDepth}</b>
            {p.divertedTo && <> → {p.divertedTo}</>}
          </p>
          {p.lastError && (
            <p class="muted small">
              {t('lastError')}: {p.lastError.message}
            </p>
          )}
          <button
            type="button"
            class="btn ghost"
            data-testid="printer-jobs"
            aria-expanded={jobsOf === p.name}
            onClick={() => setJobsOf(jobsOf === p.name ? null : p.name)}
          >
            {t('jobs')}
          </button>
          {jobsOf === p.name && (
            <table class="list small">
              <tbody>
                {jobs.map((j) => (
                  <tr key={j.id} data-testid="job">
                    <td>
                      {t(`job.${j.kind}`)} {j.round > 0 && `#${j.round}`}
                    </td>
                    <td>{t(`jobState.${j.state}`)}</td>
                    <td data-testid="job-time" title={dateTime(j.created, props.venue.timeZone)}>
                      {timeOfDay(j.created, props.venue.timeZone)}
                    </td>
                    <td>
                      <Action
                        class="btn small"
                        onRun={async () => {
                          await staff.call('POST', `/printing-api/api/jobs/${j.id}/reprint`, {});
                          showToast('info', t('reprint'));
                          await loadJobs(p.name);
                        }}
                      >
                        {t('reprint')}
                      </Action>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </div>
      ))}
    </div>
  );
}

interface StockItem {
  id: string;
  unit: string | null;
  qty: number;
  locked: number;
  available: number;
}
interface Row {
  id: string;
  unit: string;
  qty: string;
  unitPrice: string;
}
const emptyRow = (): Row => ({ id: '', unit: '', qty: '', unitPrice: '' });

/**
 * The venue warehouse's current stock (POST .../stock) for the items this device follows (the API answers for
 * named items; there is no list of every item), and the PZ and inventory forms.
 */
function Stock(props: { venue: Venue }) {
  const key = `vb.items.${props.venue.warehouse}`;
  const [items, setItems] = useState<string[]>(() => JSON.parse(localStorage.getItem(key) ?? '[]') as string[]);
  const [stock, setStock] = useState<StockItem[]>([]);
  const [error, setError] = useState<unknown>(null);
  const [newItem, setNewItem] = useState('');
  const headers = () => ({ 'x-tenant': bootstrap().tenant, 'x-user': staff.tokens.value?.userId ?? '' });
  const base = `/warehouse-api/api/warehouse/${props.venue.warehouse}`;
  const follow = (ids: string[]) => {
    const next = [...new Set([...items, ...ids.filter(Boolean)])];
    localStorage.setItem(key, JSON.stringify(next));
    setItems(next);
  };
  const load = () => {
    if (items.length === 0) return setStock([]);
    staff.call<{ items: StockItem[] }>('POST', `${base}/stock`, { items }, headers()).then((r) => {
      setError(null);
      setStock(r.items);
    }, setError);
  };
  useEffect(load, [props.venue.warehouse, items.join('\n')]);
  return (
    <div class="stock">
      <div class="card">
        <h2>{t('stock')}</h2>
        {error ? <LoadError error={error} retry={load} /> : null}
        <table class="list" data-testid="stock">
          <thead>
            <tr>
              <th>{t('item')}</th>
              <th>{t('unit')}</th>
              <th>{t('qty')}</th>
              <th>{t('locked')}</th>
              <th>{t('availableQty')}</th>
            </tr>
          </thead>
          <tbody>
            {stock.map((s) => (
              <tr key={s.id}>
                <td>{s.id}</td>
                <td>{s.unit ?? '—'}</td>
                <td>{s.qty}</td>
                <td>{s.locked}</td>
                <td>{s.available}</td>
              </tr>
            ))}
          </tbody>
        </table>
        {items.length === 0 && <p class="muted small">{t('stockHint')}</p>}
        <form
          class="row"
          onSubmit={(e) => {
            e.preventDefault();
            follow([newItem.trim()]);
            setNewItem('');
          }}
        >
          <input
            placeholder={t('item')}
            aria-label={t('item')}
            value={newItem}
            onInput={(e) => setNewItem((e.currentTarget as HTMLInputElement).value)}
          />
          <button type="submit" class="btn">
            {t('addItem')}
          </button>
          <button type="button" class="btn ghost" onClick={load}>
            {t('refresh')}
          </button>
        </form>
      </div>
      <DocumentForm
        title={t('pz')}
        kind="pz"
        prices
        onPost={async (doc) => {
          await staff.call('POST', `${base}/documents/pz`, doc, headers());
          showToast('info', t('posted'));
          follow(doc.items.map((i) => i.id));
          load();
        }}
      />
      <DocumentForm
        title={t('inventory')}
        kind="inventory"
        prices={false}
        onPost={async (doc) => {
          await staff.call('POST', `${base}/documents/inventory`, doc, headers());
          showToast('info', t('posted'));
          follow(doc.items.map((i) => i.id));
          load();
        }}
      />
    </div>
  );
}

type Doc = { number?: string; items: { id: string; unit: string; qty: number; unitPrice?: number }[] };

/** A stock document's rows as typed; the box checks them (units, decimals, ids) and says what is wrong. */
function DocumentForm(props: { title: string; kind: string; prices: boolean; onPost: (doc: Doc) => Promise<void> }) {
  const [number, setNumber] = useState('');
  const [rows, setRows] = useState<Row[]>([emptyRow()]);
  const set = (i: number, field: keyof Row, value: string) =>
    setRows((old) => old.map((r, k) => (k === i ? { ...r, [field]: value } : r)));
  return (
    <div class="card" data-testid={`form-${props.kind}`}>
      <h2>{props.title}</h2>
      <label>
        {t('number')} <input value={number} onInput={(e) => setNumber((e.currentTarget as HTMLInputElement).value)} />
      </label>
      <table class="list">
        <thead>
          <tr>
            <th>{t('item')}</th>
            <th>{t('unit')}</th>
            <th>{t('qty')}</th>
            {props.prices && <th>{t('unitPrice')}</th>}
          </tr>
        </thead>
        <tbody>
          {rows.map((r, i) => (
            <tr key={i}>
              <td>
                <input
                  data-testid="row-id"
                  aria-label={`${t('item')}, ${t('row')} ${i + 1}`}
                  value={r.id}
                  onInput={(e) => set(i, 'id', (e.currentTarget as HTMLInputElement).value)}
                />
              </td>
              <td>
                <input
                  data-testid="row-unit"
                  aria-label={`${t('unit')}, ${t('row')} ${i + 1}`}
                  size={4}
                  value={r.unit}
                  onInput={(e) => set(i, 'unit', (e.currentTarget as HTMLInputElement).value)}
                />
              </td>
              <td>
                <input
                  data-testid="row-qty"
                  aria-label={`${t('qty')}, ${t('row')} ${i + 1}`}
                  inputMode="decimal"
                  size={6}
                  value={r.qty}
                  onInput={(e) => set(i, 'qty', (e.currentTarget as HTMLInputElement).value)}
                />
              </td>
              {props.prices && (
                <td>
                  <input
                    data-testid="row-price"
                    aria-label={`${t('unitPrice')}, ${t('row')} ${i + 1}`}
                    inputMode="decimal"
                    size={6}
                    value={r.unitPrice}
                    onInput={(e) => set(i, 'unitPrice', (e.currentTarget as HTMLInputElement).value)}
                  />
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
      <div class="row">
        <button type="button" class="btn ghost" onClick={() => setRows((old) => [...old, emptyRow()])}>
          {t('addRow')}
        </button>
        <Action
          class="btn primary"
          testid={`post-${props.kind}`}
          onRun={async () => {
            const items = rows
              .filter((r) => r.id.trim())
              .map((r) => ({
                id: r.id.trim(),
                unit: r.unit.trim(),
                qty: Number(r.qty.replace(',', '.')),
                ...(props.prices && r.unitPrice.trim() ? { unitPrice: Number(r.unitPrice.replace(',', '.')) } : {}),
              }));
            await props.onPost({ ...(number.trim() ? { number: number.trim() } : {}), items });
            setRows([emptyRow()]);
            setNumber('');
          }}
        >
          {t('post')}
        </Action>
      </div>
    </div>
  );
}

interface Sync {
  central: string | null;
  backlog: number;
  oldestUnsyncedAgeS: number | null;
  lastSuccessAt: string | null;
  lastError: string | null;
  lastErrorAt: string | null;
  deadLetters: number;
  catalogue: { rev: number; appliedAt: string | null; lastError: string | null } | null;
}

function SyncStatus(props: { timeZone: string }) {
  const [status, setStatus] = useState<Sync | null>(null);
  const [error, setError] = useState<unknown>(null);
  const load = () =>
    staff.call<Sync>('GET', '/sync-api/api/status').then((s) => {
      setError(null);
      setStatus(s);
    }, setError);
  useEffect(() => {
    void load();
    const timer = setInterval(() => void load(), 10_000);
    return () => clearInterval(timer);
  }, []);
  if (error) return <LoadError error={error} retry={() => void load()} />;
  if (!status) return <p class="muted">{t('loading')}</p>;
  const when = (iso: string | null) => (iso ? dateTime(iso, props.timeZone) : t('none'));
  return (
    <div class="card" data-testid="sync">
      <dl class="facts">
        <dt>{t('central')}</dt>
        <dd>{status.central ?? t('notEnrolled')}</dd>
        <dt>{t('backlog')}</dt>
        <dd>{status.backlog}</dd>
        <dt>{t('lastSuccess')}</dt>
        <dd>{when(status.lastSuccessAt)}</dd>
        <dt>{t('lastError')}</dt>
        <dd>{status.lastError ? `${status.lastError} (${when(status.lastErrorAt)})` : t('none')}</dd>
        <dt>{t('catalogue')}</dt>
        <dd>
          {status.catalogue
            ? `rev ${status.catalogue.rev}${status.catalogue.lastError ? ` · ${status.catalogue.lastError}` : ''}`
            : t('none')}
        </dd>
      </dl>
    </div>
  );
}
