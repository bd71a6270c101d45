import type { ComponentChildren } from 'preact';
import { csvText } from './csv.js';
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
