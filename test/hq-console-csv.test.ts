import { expect, test } from 'vitest';
import { csvText } from '../web/hq/csv.js';
import type { CsvColumn } from '../web/hq/csv.js';

// The console's CSV export (docs/console.md "Pages"): RFC 4180 quoting, and nothing a spreadsheet would run.
const columns: CsvColumn<{ text: string; n: number }>[] = [
  { label: 'text', cell: (r) => r.text },
  { label: 'n', cell: (r) => r.n },
];

test('a cell that would start a formula is defused; numbers, negative ones too, stay numbers', () => {
  const rows = [
    { text: '=HYPERLINK("http://x")', n: 1 },
    { text: '-1+HYPERLINK("http://x")', n: -2 },
    { text: '+48 600 100 200', n: 0 },
    { text: '@SUM(A1)', n: 3 },
    { text: '\tcmd', n: 4 },
    { text: '-12.50', n: 5 },
    { text: 'Żurek, "domowy"', n: 6 },
  ];
  expect(csvText(columns, rows).split('\r\n')).toEqual([
    'text,n',
    `"'=HYPERLINK(""http://x"")",1`,
    `"'-1+HYPERLINK(""http://x"")",-2`,
    "'+48 600 100 200,0",
    "'@SUM(A1),3",
    "'\tcmd,4",
    '-12.50,5',
    '"Żurek, ""domowy""",6',
  ]);
});
