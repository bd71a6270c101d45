/**
 * Quantities: numbers in the API, exact to 6 decimal places inside as integer micro-units
 * (docs/warehouse.md "The warehouse", "Rules": Quantities). More precision is refused, never rounded away.
 */
export const QTY_DECIMALS = 6;
const SCALE = 1_000_000;

/**
 * The largest quantity in micro-units: 15 significant digits, so every value up to it converts to a JSON
 * number and back without loss (a double holds 15 decimal digits exactly), and sums of a few of them stay
 * far inside Number.MAX_SAFE_INTEGER.
 */
export const MAX_QTY_MICRO = 999_999_999_999_999;
/** MAX_QTY_MICRO as an API number (999999999.999999). */
export const MAX_QTY = MAX_QTY_MICRO / SCALE;

export class QtyError extends RangeError {}

/**
 * Converts an API quantity to micro-units. A JSON number is the double nearest to its decimal text; it has at
 * most 6 decimals exactly when scaling it to micro-units and back gives the same double.
 */
export function toMicro(value: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new QtyError(`not a finite number: ${String(value)}`);
  const micro = Math.round(value * SCALE);
  if (Math.abs(micro) > MAX_QTY_MICRO) throw new QtyError(`quantity out of range: ${value}`);
  if (micro / SCALE !== value) throw new QtyError(`more than ${QTY_DECIMALS} decimal places: ${value}`);
  return micro === 0 ? 0 : micro; // never -0
}

/** Micro-units back to an API number; exact, because |micro| <= MAX_QTY_MICRO has at most 15 digits. */
export function fromMicro(micro: number): number {
  if (!Number.isSafeInteger(micro)) throw new QtyError(`not a quantity in micro-units: ${micro}`);
  const value = micro / SCALE;
  return value === 0 ? 0 : value;
}

/** True when `value` is a finite quantity of at most 6 decimals within range. */
export function isExactQty(value: number): boolean {
  try {
    toMicro(value);
    return true;
  } catch {
    return false;
  }
}
