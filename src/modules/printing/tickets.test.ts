import { describe, expect, test } from 'vitest';
import { encodeTestPage, encodeTicket, type Ticket } from './tickets.js';

const CP852 = { columns: 42, codePage: 'cp852' };
const base = {
  venueName: 'Pod Wawelem',
  orderType: 'TAKE_AWAY',
  claimCode: '042137',
  orderId: '7c3fc4a0-122e-4121-9f94-91835435e5c9',
  at: Date.parse('2026-11-23T11:05:00Z'),
  timeZone: 'Europe/Warsaw',
  lines: [
    { quantity: 2, name: 'Żurek', price: '36.00' },
    { quantity: 1, name: 'Gęś pieczona', price: '58.00' },
  ],
};
const bytes = (ticket: Ticket, options = {}) => Buffer.from(encodeTicket(ticket, CP852, options));
const has = (haystack: Buffer, needle: Buffer | string) =>
  haystack.includes(typeof needle === 'string' ? Buffer.from(needle, 'latin1') : needle);

describe('tickets', () => {
  test('a kitchen ticket starts with ESC @, selects cp852 and ends with a cut', () => {
    const out = bytes({ ...base, kind: 'kitchen', round: 2 });
    expect(out.subarray(0, 2)).toEqual(Buffer.from([0x1b, 0x40]));
    expect(has(out, Buffer.from([0x1b, 0x74, 18]))).toBe(true); // ESC t 18: PC852 on Epson
    expect(has(out, Buffer.from([0x1d, 0x56]))).toBe(true); // GS V: cut
    expect(has(out, '042137')).toBe(true);
    expect(has(out, 'Round 2')).toBe(true);
    expect(has(out, '12:05')).toBe(true); // local time in Warsaw (UTC+1)
  });

  test('the order type is printed in words in both languages, never as the API enum', () => {
    for (const kind of ['kitchen', 'cancel', 'claim'] as const) {
      const out = bytes({ ...base, kind, round: 1, total: '94.00' } as Ticket);
      expect(has(out, 'NA WYNOS / TAKE-AWAY'), kind).toBe(true);
      expect(has(out, 'TAKE_AWAY'), kind).toBe(false);
    }
    expect(has(bytes({ ...base, orderType: 'DINE_IN_OPEN', kind: 'kitchen', round: 3 }), 'RACHUNEK / TAB')).toBe(true);
    expect(has(bytes({ ...base, orderType: 'DINE_IN_OPEN', kind: 'kitchen', round: 3 }), 'DINE_IN')).toBe(false);
    expect(has(bytes({ ...base, orderType: 'DELIVERY', kind: 'kitchen', round: 1 }), 'DOSTAWA / DELIVERY')).toBe(true);
  });

  test('Polish letters are encoded in cp852, not as UTF-8', () => {
    const out = bytes({ ...base, kind: 'kitchen', round: 1 });
    // Ż=0xBD u r e k ; Gęś: ę=0xA9 ś=0x98
    expect(has(out, Buffer.from([0x32, 0x20, 0x78, 0x20, 0xbd, 0x75, 0x72, 0x65, 0x6b]))).toBe(true);
    expect(has(out, Buffer.from([0x47, 0xa9, 0x98]))).toBe(true);
    expect(has(out, Buffer.from('Ż', 'utf8'))).toBe(false);
  });

  test('the claim slip carries a QR code of the order id, totals and "not a fiscal receipt"', () => {
    const out = bytes({ ...base, kind: 'claim', total: '94.00' });
    expect(has(out, Buffer.from([0x1d, 0x28, 0x6b]))).toBe(true); // GS ( k: QR code
    expect(has(out, base.orderId)).toBe(true);
    expect(has(out, '94.00')).toBe(true);
    expect(has(out, 'Not a fiscal receipt')).toBe(true);
  });

  test('a reprint says COPY / KOPIA; a backup printing names the printer it was for', () => {
    expect(has(bytes({ ...base, kind: 'kitchen', round: 1 }, { copy: true }), 'KOPIA / COPY')).toBe(true);
    expect(has(bytes({ ...base, kind: 'kitchen', round: 1 }), 'COPY')).toBe(false);
    expect(has(bytes({ ...base, kind: 'kitchen', round: 1 }, { forPrinter: 'grill' }), 'FOR: grill')).toBe(true);
  });

  test('a cancel slip says CANCELLED with the reason', () => {
    const out = bytes({ ...base, kind: 'cancel', reason: 'klient zrezygnowal' });
    expect(has(out, 'CANCELLED')).toBe(true);
    expect(has(out, 'klient zrezygnowal')).toBe(true);
  });

  test("a line's kitchen note is printed under it, in the code page, wrapped to the width", () => {
    const note = 'bez cebuli, sos osobno, dużo koperku i proszę o szybkie wydanie';
    const ticket = { ...base, lines: [{ ...base.lines[0]!, note }, base.lines[1]!] };
    const out = bytes({ ...ticket, kind: 'kitchen', round: 1 });
    expect(has(out, '>> bez cebuli, sos osobno,')).toBe(true);
    expect(has(out, Buffer.from([0x64, 0x75, 0xbe, 0x6f]))).toBe(true); // "dużo": ż=0xBE in cp852
    // Wrapped at a word to the 42 columns: "  >> bez cebuli, sos osobno, dużo koperku" is 41.
    expect(has(out, 'koperku\x1bE\x00\n\r\x1bE\x01i pro')).toBe(true);
    expect(has(out, 'szybkie wydanie')).toBe(true);
    // The note follows its own line, before the next one.
    expect(out.indexOf(Buffer.from('>> bez'))).toBeGreaterThan(
      out.indexOf(Buffer.from([0xbd, 0x75, 0x72, 0x65, 0x6b])),
    );
    expect(out.indexOf(Buffer.from('>> bez'))).toBeLessThan(out.indexOf(Buffer.from([0x47, 0xa9, 0x98])));
  });

  test('the test page prints the Polish alphabet in the code page', () => {
    const out = Buffer.from(encodeTestPage('kitchen', CP852, 0));
    expect(has(out, Buffer.from([0xa4, 0x8f, 0xa8, 0x9d, 0xe3, 0xe0, 0x97, 0x8d, 0xbd]))).toBe(true); // ĄĆĘŁŃÓŚŹŻ
  });
});
