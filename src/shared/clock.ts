/** Wall clock in one place so tests and logs agree on the source of time. */
export const nowMs = (): number => Date.now();
export const isoOf = (ms: number): string => new Date(ms).toISOString();

/**
 * One date format in any IANA time zone. Building an Intl.DateTimeFormat costs far more than using one (it was
 * the top cost of processing an order command in a profile), so each zone's formatter is built once and kept.
 */
export function zonedFormat(
  locale: string,
  options: Intl.DateTimeFormatOptions,
): (timeZone: string) => Intl.DateTimeFormat {
  const formatters = new Map<string, Intl.DateTimeFormat>();
  return (timeZone) => {
    let f = formatters.get(timeZone);
    if (!f) {
      f = new Intl.DateTimeFormat(locale, { ...options, timeZone });
      formatters.set(timeZone, f);
    }
    return f;
  };
}
