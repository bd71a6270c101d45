import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import catalogue from '../web/hq/pages/catalogue/strings.js';
import dashboard from '../web/hq/pages/dashboard/strings.js';
import fleet from '../web/hq/pages/fleet/strings.js';
import orders from '../web/hq/pages/orders/strings.js';
import reports from '../web/hq/pages/reports/strings.js';
import stock from '../web/hq/pages/stock/strings.js';
import shell from '../web/hq/strings.js';

// The console in Polish and English (docs/console.md "Pages"): every word in both, every key the code names known.
const DICTS = { shell, catalogue, dashboard, fleet, orders, reports, stock };

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return /\.tsx?$/.test(name) && !name.endsWith('strings.ts') ? [path] : [];
  });
}

describe('the console speaks Polish and English', () => {
  test.each(Object.entries(DICTS))('%s has the same keys in both languages, none empty', (_name, dict) => {
    expect(Object.keys(dict.en).sort()).toEqual(Object.keys(dict.pl).sort());
    for (const lang of [dict.pl, dict.en])
      for (const [key, text] of Object.entries(lang)) expect([key, text.trim()]).not.toEqual([key, '']);
  });

  test('a page keeps its words under its own prefix, so no two pages define the same key', () => {
    for (const [name, dict] of Object.entries(DICTS)) {
      if (name === 'shell') continue;
      for (const key of Object.keys(dict.pl)) expect(key.startsWith(`${name}.`), `${name}: ${key}`).toBe(true);
    }
  });

  test("every t('key') in the console's code is a known key", () => {
    const known = new Set(Object.values(DICTS).flatMap((d) => Object.keys(d.pl)));
    const missing: string[] = [];
    for (const file of sources('web/hq')) {
      for (const m of readFileSync(file, 'utf8').matchAll(/\bt\(\s*'([^']+)'/g)) {
        if (!known.has(m[1]!)) missing.push(`${file}: ${m[1]}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
