import { describe, expect, test } from 'vitest';
import { encodeTicket } from './tickets.js';
import { transliterate } from './transliterate.js';

const base = {
  venueName: 'Pod Wawelem',
  orderType: 'TAKE_AWAY',
  claimCode: '042137',
  orderId: '7c3fc4a0-122e-4121-9f94-91835435e5c9',
  at: Date.parse('2026-11-23T11:05:00Z'),
  timeZone: 'Europe/Warsaw',
  lines: [{ quantity: 1, name: 'Żurek' }],
};
const cancel = (reason: string, codePage = 'cp852') =>
  Buffer.from(encodeTicket({ ...base, kind: 'cancel', reason }, { columns: 42, codePage }));
const has = (out: Buffer, bytes: number[] | string) =>
  out.includes(typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : Buffer.from(bytes));

describe('characters outside the printer code page (encoder output bytes)', () => {
  test('an em dash in a cancel reason prints as "-", not "?"', () => {
    const out = cancel('brak buraków — klient poczeka');
    // "buraków - klient": ó = 0xA2 in cp852
    expect(has(out, [0x62, 0x75, 0x72, 0x61, 0x6b, 0xa2, 0x77, 0x20, 0x2d, 0x20, 0x6b])).toBe(true);
    expect(has(out, 'Reason: brak bura')).toBe(true);
    expect(out.includes(0x3f)).toBe(false); // no '?' anywhere on the slip
  });

  test('en dash, curly quotes and an ellipsis become -, straight quotes and ...', () => {
    const out = cancel('12–14 „W” ‘x’ “y” już…');
    expect(has(out, 'Reason: 12-14 "W" \'x\' "y" ju')).toBe(true);
    expect(has(out, [0x6a, 0x75, 0xbe, 0x2e, 0x2e, 0x2e])).toBe(true); // "już...": ż = 0xBE
  });

  test('Polish letters that cp852 has are kept as its bytes, never replaced', () => {
    const out = cancel('ĄĆĘŁŃÓŚŹŻ ąćęłńóśźż');
    expect(
      has(
        out,
        [
          0xa4, 0x8f, 0xa8, 0x9d, 0xe3, 0xe0, 0x97, 0x8d, 0xbd, 0x20, 0xa5, 0x86, 0xa9, 0x88, 0xe4, 0xa2, 0x98, 0xab,
          0xbe,
        ],
      ),
    ).toBe(true);
  });

  test('letters the code page lacks print as their base letter; what has none is one "?"', () => {
    // cp852 has é (0x82) and ü (0x81) but not ñ, ø, õ: those become n, o, o. The emoji is one '?', not two.
    const out = cancel('ñø café über õ 🌶!');
    expect(
      has(out, [0x6e, 0x6f, 0x20, 0x63, 0x61, 0x66, 0x82, 0x20, 0x81, 0x62, 0x65, 0x72, 0x20, 0x6f, 0x20, 0x3f, 0x21]),
    ).toBe(true);
  });

  test('in a code page without Polish letters (cp437) they print as their base letters', () => {
    const out = cancel('Żurek — gęś', 'cp437');
    expect(has(out, 'Zurek - ges')).toBe(true);
  });

  test('control characters print as spaces, never as printer commands', () => {
    const out = cancel('a\u001b@b\u001dVc');
    expect(has(out, 'Reason: a @b Vc')).toBe(true);
    expect(has(out, [0x1b, 0x40, 0x62])).toBe(false);
  });
});

describe('transliterate', () => {
  test("decomposed input is composed first (ę as e + U+0328 is cp852's ę)", () => {
    expect(transliterate('ge\u0328s\u0301', 'cp852')).toBe('gęś');
  });
  test('a lone combining mark prints nothing', () => {
    expect(transliterate('x\u0301!', 'cp437')).toBe('x!');
  });
});
