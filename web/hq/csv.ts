/** What the CSV needs of a table's column (web/hq/table.tsx Column): its label, and the cell or its raw figure. */
export interface CsvColumn<R> {
  label: string;
  cell: (row: R) => unknown;
  csv?: (row: R) => string | number | null;
}

/**
 * A table as CSV (docs/console.md "Pages": every table exports): the raw figures ("12.50", ISO dates), comma
 * separated, CRLF lines. The BOM spreadsheets need is added by the download.
 */
export function csvText<R>(columns: CsvColumn<R>[], rows: R[]): string {
  const line = (cells: (string | number | null)[]) => cells.map(csvCell).join(',');
  const csvOf = (c: CsvColumn<R>, row: R) => {
    if (c.csv) return c.csv(row);
    const v = c.cell(row);
    return typeof v === 'string' || typeof v === 'number' ? v : '';
  };
  return [line(columns.map((c) => c.label)), ...rows.map((r) => line(columns.map((c) => csvOf(c, r))))].join('\r\n');
}

/**
 * RFC 4180 quoting; a text cell a spreadsheet could run as a formula (starting with `=`, `+`, `-`, `@`, a tab or a
 * carriage return: OWASP's CSV injection advice) gets a leading apostrophe, unless it is a plain number ("-12.50").
 * Numbers are written as they are.
 */
function csvCell(value: string | number | null): string {
  if (value === null) return '';
  if (typeof value === 'number') return String(value);
  const safe = /^[=+\-@\t\r]/.test(value) && !/^-?\d+(\.\d+)?$/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}
