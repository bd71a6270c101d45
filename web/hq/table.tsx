import type { ComponentChildren } from 'preact';
import { t } from './i18n.js';

export interface Column<R> {
  label: string;
  /** What the cell shows. */
  cell: (row: R) => ComponentChildren;
  /** What the CSV holds (the raw figure, not the formatted one); the cell's text when it is a string or number. */
  csv?: (row: R) => string | number | null;
  numeric?: boolean;
}

/**
 * A table with its CSV export: every table of the console can be taken to a spreadsheet. The CSV holds the raw
 * figures ("12.50", ISO dates), comma-separated, UTF-8 with a BOM so spreadsheet programs read Polish letters.
 */
export function DataTable<R>(props: {
  columns: Column<R>[];
  rows: R[];
  csvName: string;
  caption?: string;
  rowKey?: (row: R, index: number) => string;
  onRow?: (row: R) => void;
  testid?: string;
}) {
  const { columns, rows } = props;
  return (
    <div class="table-wrap">
      <div class="table-tools">
        {props.caption && <h3 class="table-caption">{props.caption}</h3>}
        <button
          type="button"
          class="btn small"
          title={t('app.csvTitle')}
          data-testid="csv"
          onClick={() => downloadCsv(props.csvName, columns, rows)}
        >
          {t('app.csv')}
        </button>
      </div>
      <table class="data" data-testid={props.testid}>
        {props.caption && <caption class="sr-only">{props.caption}</caption>}
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c.label} scope="col" class={c.numeric ? 'num' : ''}>
                {c.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.length === 0 && (
            <tr>
              <td colSpan={columns.length} class="muted">
                {t('app.empty')}
              </td>
            </tr>
          )}
          {rows.map((row, i) => (
            <tr
              key={props.rowKey ? props.rowKey(row, i) : String(i)}
              class={props.onRow ? 'clickable' : ''}
              onClick={props.onRow ? () => props.onRow!(row) : undefined}
            >
              {columns.map((c) => (
                <td key={c.label} class={c.numeric ? 'num' : ''}>
                  {c.cell(row)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function csvText<R>(columns: Column<R>[], rows: R[]): string {
  const line = (cells: (string | number | null)[]) => cells.map(csvCell).join(',');
  const csvOf = (c: Column<R>, row: R) => {
    if (c.csv) return c.csv(row);
    const v = c.cell(row);
    return typeof v === 'string' || typeof v === 'number' ? v : '';
  };
  return [line(columns.map((c) => c.label)), ...rows.map((r) => line(columns.map((c) => csvOf(c, r))))].join('\r\n');
}

/**
 * RFC 4180 quoting; a text cell a spreadsheet would run as a formula (`=`, `+`, `@`, or `-` not starting a
 * number) gets a leading apostrophe (OWASP's CSV injection advice). Numbers are written as they are.
 */
function csvCell(value: string | number | null): string {
  if (value === null) return '';
  if (typeof value === 'number') return String(value);
  const safe = /^[=+@\t\r]|^-(?!\d)/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

function downloadCsv<R>(name: string, columns: Column<R>[], rows: R[]): void {
  const blob = new Blob([`\uFEFF${csvText(columns, rows)}\r\n`], { type: 'text/csv;charset=utf-8' });
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = `${name}.csv`;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
