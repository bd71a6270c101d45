import { describe, expect, test } from 'vitest';
import { ConfigError, resolveConfig } from '../../config.js';
import { type PrinterConfig, printerAddress, printerLocation, printerProblems, routeTicket } from './printers.js';

const V = 'venue-1';
const printer = (p: Partial<PrinterConfig> & Pick<PrinterConfig, 'name' | 'role'>): PrinterConfig => ({
  venue: V,
  path: `/dev/receipt-${p.name}`,
  baudRate: 19200,
  columns: 42,
  codePage: 'cp852',
  statusQuery: true,
  ...p,
});
const hot = printer({ name: 'hot', role: 'kitchen', categories: ['soups', 'mains'] });
const bar = printer({ name: 'bar', role: 'kitchen', categories: ['drinks'] });
const expo = printer({ name: 'expo', role: 'kitchen' });
const counter = printer({ name: 'counter', role: 'counter' });
const elsewhere = printer({ name: 'other', role: 'kitchen', venue: 'venue-2' });
const lines = [
  { id: 'zurek', category: 'soups' },
  { id: 'kompot', category: 'drinks' },
  { id: 'sernik', category: 'desserts' },
];
const names = (routes: { printer: string | null; lines: { id: string }[] }[]) =>
  routes.map((r) => [r.printer, r.lines.map((l) => l.id)]);

describe('routing at write time', () => {
  test('kitchen: each station its categories; a line no station lists goes to the first kitchen printer', () => {
    expect(names(routeTicket([hot, bar, counter, elsewhere], V, 'kitchen', lines))).toEqual([
      ['hot', ['zurek', 'sernik']],
      ['bar', ['kompot']],
    ]);
  });

  test('kitchen: a printer without categories prints every line; a station without lines gets no ticket', () => {
    expect(names(routeTicket([hot, bar, expo], V, 'kitchen', lines.slice(0, 1)))).toEqual([
      ['hot', ['zurek']],
      ['expo', ['zurek']],
    ]);
  });

  test('claim slips go to the first counter printer; cancel slips to the kitchen printers that had the order', () => {
    expect(names(routeTicket([hot, counter, printer({ name: 'c2', role: 'counter' })], V, 'claim', lines))).toEqual([
      ['counter', ['zurek', 'kompot', 'sernik']],
    ]);
    expect(names(routeTicket([hot, bar, expo], V, 'cancel', lines.slice(0, 2), ['bar', 'hot']))).toEqual([
      ['hot', ['zurek']],
      ['bar', ['kompot']],
    ]);
    // A printer that had the order but none of these lines (its categories changed since) gets every line.
    expect(names(routeTicket([hot, bar], V, 'cancel', lines.slice(1, 2), ['hot']))).toEqual([['hot', ['kompot']]]);
  });

  test('no printer of the role at the venue: one unrouted ticket with every line', () => {
    expect(names(routeTicket([counter, elsewhere], V, 'kitchen', lines))).toEqual([
      [null, ['zurek', 'kompot', 'sernik']],
    ]);
    expect(names(routeTicket([hot], V, 'claim', lines))).toEqual([[null, ['zurek', 'kompot', 'sernik']]]);
    expect(names(routeTicket([hot, bar], V, 'cancel', lines, []))).toEqual([[null, ['zurek', 'kompot', 'sernik']]]);
  });
});

describe('configuration checks beyond the schema', () => {
  test('a valid configuration has no problem', () => {
    expect(printerProblems([{ ...hot, backup: 'counter' }, bar, counter])).toEqual([]);
  });

  test('duplicate names, unknown or self backups, categories on a counter, unknown code pages', () => {
    expect(
      printerProblems([
        hot,
        { ...bar, name: 'hot' },
        { ...expo, backup: 'nope' },
        { ...counter, categories: ['soups'], backup: 'counter' },
        { ...elsewhere, codePage: 'klingon' },
      ]),
    ).toEqual([
      '/printers/1/name: printer name hot is used twice',
      '/printers/3/categories: only a kitchen printer (a station) takes categories',
      '/printers/4/codePage: unknown code page klingon',
      '/printers/2/backup: no printer is named nope',
      '/printers/3/backup: a printer cannot be its own backup',
    ]);
  });
});

describe('the printers in the configuration file', () => {
  const venue = '6f1c2f43-5a3e-4c55-9d51-1f7b2f0c9a01';

  test('defaults fill each printer and the spooler options; no printers by default', () => {
    expect(resolveConfig({}).printers).toEqual([]);
    expect(resolveConfig({}).printing).toEqual({
      kitchenMaxAgeMinutes: 30,
      backupAfterSeconds: 120,
      retryMinMs: 1000,
      retryMaxMs: 15000,
      statusTimeoutMs: 1000,
      statusPollSeconds: 15,
    });
    const config = resolveConfig({ printers: [{ name: 'hot', venue, role: 'kitchen', path: '/dev/receipt-kitchen' }] });
    expect(config.printers).toEqual([
      {
        name: 'hot',
        venue,
        role: 'kitchen',
        path: '/dev/receipt-kitchen',
        baudRate: 19200,
        columns: 42,
        codePage: 'cp852',
        statusQuery: true,
      },
    ]);
  });

  test('a bad printer stops the start with the option named', () => {
    const bad = (printer: Record<string, unknown>) => () =>
      resolveConfig({ printers: [{ name: 'hot', venue, role: 'kitchen', path: '/dev/x', ...printer }] });
    expect(bad({ role: 'bar' })).toThrow(ConfigError);
    expect(bad({ venue: 'rynek' })).toThrow(/\/printers\/0\/venue/);
    expect(bad({ colour: 'red' })).toThrow(ConfigError);
    expect(bad({ backup: 'hot' })).toThrow('/printers/0/backup: a printer cannot be its own backup');
    expect(bad({ codePage: 'klingon' })).toThrow('/printers/0/codePage: unknown code page klingon');
    expect(bad({ port: 9100 })).toThrow(
      '/printers/0/port: printer hot is a serial printer ("path"): only a network printer ("host") takes a port',
    );
  });

  test('a network printer: host and a port (9100 when absent); exactly one of path and host, or no start', () => {
    const config = resolveConfig({
      printers: [
        { name: 'hot', venue, role: 'kitchen', host: '192.168.1.50' },
        { name: 'bar', venue, role: 'kitchen', host: 'bar-printer.local', port: 9101 },
      ],
    });
    expect(config.printers.map(printerLocation)).toEqual(['tcp://192.168.1.50:9100', 'tcp://bar-printer.local:9101']);
    expect(printerAddress(config.printers[0]!)).toEqual({ kind: 'tcp', host: '192.168.1.50', port: 9100 });
    const start = (printer: Record<string, unknown>) => () =>
      resolveConfig({
        printers: [
          { name: 'ok', venue, role: 'counter', path: '/dev/x' },
          { venue, role: 'kitchen', ...printer },
        ],
      });
    expect(start({ name: 'grill', path: '/dev/x', host: '10.0.0.9' })).toThrow(
      '/printers/1: printer grill needs exactly one of "path" (a serial printer) or "host" (a network printer), not both',
    );
    expect(start({ name: 'grill' })).toThrow(
      '/printers/1: printer grill needs exactly one of "path" (a serial printer) or "host" (a network printer)',
    );
    expect(start({ name: 'grill', host: 'tcp://10.0.0.9:9100' })).toThrow(/\/printers\/1\/host/);
    expect(start({ name: 'grill', host: '10.0.0.9', port: 0 })).toThrow(/\/printers\/1\/port/);
  });
});
