import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import {
  AppError,
  COMMAND_ERRORS,
  EXIT_CODES,
  HTTP_ERRORS,
  OAUTH_ERRORS,
  ProcessError,
  STATUS,
  SYNC_ERRORS,
} from './errors.js';

/*
 * The documented error tables (docs/api.md "Errors", docs/orders.md "The order lifecycle") and the catalogue are
 * one list: a code added to either without the other fails here (as Fastify keeps its errors.js and its
 * reference documentation in step).
 */

const DOCS = ['api.md', 'orders.md']
  .map((page) => readFileSync(join(__dirname, '..', '..', 'docs', page), 'utf8'))
  .join('\n');

/** The text of a section, from its heading to the next heading of the same or a higher level. */
function section(heading: string): string {
  const lines = DOCS.split('\n');
  const start = lines.indexOf(heading);
  if (start < 0) throw new Error(`docs/api.md and docs/orders.md have no heading ${heading}`);
  const level = heading.indexOf(' ');
  const end = lines.findIndex((l, i) => i > start && /^#+ /.test(l) && l.indexOf(' ') <= level);
  return lines.slice(start + 1, end < 0 ? undefined : end).join('\n');
}

interface Row {
  codes: string[];
  statuses: number[];
}

/** Every table of a text: per row, the backticked codes of its `codeColumn` and the numbers of its `status` column. */
function tables(text: string, codeColumn: string): Row[][] {
  const out: Row[][] = [];
  let header: string[] | undefined;
  for (const line of [...text.split('\n'), '']) {
    if (!line.startsWith('|')) {
      header = undefined;
      continue;
    }
    const cells = line
      .split('|')
      .slice(1, -1)
      .map((c) => c.trim());
    if (!header) {
      header = cells;
      out.push([]);
      continue;
    }
    if (cells.every((c) => /^-+$/.test(c))) continue;
    const codeAt = header.indexOf(codeColumn);
    const statusAt = header.indexOf('status');
    if (codeAt < 0) continue;
    out.at(-1)!.push({
      codes: [...cells[codeAt]!.matchAll(/`([A-Za-z_]+)`/g)].map((m) => m[1]!),
      statuses: statusAt < 0 ? [] : [...cells[statusAt]!.matchAll(/\d{3}/g)].map((m) => Number(m[0])),
    });
  }
  return out.filter((t) => t.length > 0);
}

const sorted = (codes: Iterable<string>) => [...codes].sort();

describe('the documented error tables and the error catalogue', () => {
  const errors = section('## Errors');

  test('HTTP and sync codes: the same codes, each with its status', () => {
    const rows = tables(errors, 'code').flat();
    const readme = new Map(rows.flatMap((r) => r.codes.map((c) => [c, r.statuses] as const)));
    expect(sorted(readme.keys())).toEqual(sorted(Object.keys({ ...HTTP_ERRORS, ...SYNC_ERRORS })));
    for (const [code, statuses] of readme)
      expect({ code, statuses }).toEqual({ code, statuses: [STATUS[code as keyof typeof STATUS]] });
  });

  test('OAuth errors of the token endpoint: the same codes, each with its status', () => {
    const rows = tables(errors, 'error').flat();
    expect(sorted(rows.flatMap((r) => r.codes))).toEqual(sorted(Object.keys(OAUTH_ERRORS)));
    for (const r of rows) {
      for (const code of r.codes) expect(r.statuses).toContain(OAUTH_ERRORS[code as keyof typeof OAUTH_ERRORS].status);
    }
  });

  test("business codes of a NOTIFICATION: the lifecycle's table is the catalogue's list", () => {
    const table = tables(section('## The order lifecycle'), 'code').find((t) =>
      t.some((r) => r.codes.includes('emptyOrder')),
    );
    expect(sorted(table!.flatMap((r) => r.codes))).toEqual(sorted(Object.keys(COMMAND_ERRORS)));
  });
});

describe('errors built from the catalogue', () => {
  test('a code takes its status, and unauthorized its challenge', () => {
    expect(AppError.of('idempotencyKeyReused', 'x').status).toBe(422);
    expect(AppError.of('unauthorized', 'x').headers['WWW-Authenticate']).toMatch(/^Bearer /);
    expect(AppError.of('storageFull', 'x', [], { 'Retry-After': '10' }).headers).toEqual({ 'Retry-After': '10' });
  });
});

describe('the documented exit codes and the catalogue', () => {
  const operations = readFileSync(join(__dirname, '..', '..', 'docs', 'operations.md'), 'utf8');

  test('docs/operations.md "Exit codes" lists every reason with its code', () => {
    const start = operations.indexOf('### Exit codes');
    expect(start).toBeGreaterThan(0);
    const text = operations.slice(start, operations.indexOf('\n#', start + 1));
    const rows = [...text.matchAll(/^\| (\d+) \| `(\w+)` \|/gm)].map((m) => [m[2], Number(m[1])]);
    expect(Object.fromEntries(rows)).toEqual(
      Object.fromEntries(Object.entries(EXIT_CODES).map(([reason, spec]) => [reason, spec.code])),
    );
  });

  test("a ProcessError exits with its reason's code; only a bug is 70", () => {
    expect(new ProcessError('config', 'x').exitCode).toBe(78);
    expect(new ProcessError('data', 'x').exitCode).toBe(65);
    const codes = Object.values(EXIT_CODES).map((e) => e.code);
    expect(new Set(codes).size).toBe(codes.length);
  });
});
