/** Money: decimal strings in the API ("12.50"), integer minor units (grosze, cents) inside. */
const MONEY = /^-?\d{1,12}(\.\d{1,2})?$/;

export function parseMoney(value: string | number): number {
  const text = typeof value === 'number' ? value.toFixed(2) : value.trim();
  if (!MONEY.test(text)) throw new RangeError(`not a money amount: ${String(value)}`);
  const negative = text.startsWith('-');
  const [whole, frac = ''] = text.replace('-', '').split('.');
  const minor = Number(whole) * 100 + Number(frac.padEnd(2, '0'));
  return negative ? -minor : minor;
}

export function formatMoney(minor: number): string {
  if (!Number.isSafeInteger(minor)) throw new RangeError(`not an amount in minor units: ${minor}`);
  const sign = minor < 0 ? '-' : '';
  const abs = Math.abs(minor);
  return `${sign}${Math.trunc(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}
