import { t } from './i18n.js';
import { useCatalogue, venuesOf } from './data.js';

/** A venue picker; `all` adds "all venues" (value ''). */
export function VenuePicker(props: { value: string; onChange: (id: string) => void; all?: boolean; id?: string }) {
  const venues = venuesOf(useCatalogue());
  return (
    <select
      id={props.id}
      aria-label={props.id ? undefined : t('app.venue')}
      value={props.value}
      data-testid="venue-picker"
      onChange={(e) => props.onChange((e.currentTarget as HTMLSelectElement).value)}
    >
      {props.all && <option value="">{t('app.allVenues')}</option>}
      {venues.map((v) => (
        <option key={v.id} value={v.id}>
          {v.name}
        </option>
      ))}
    </select>
  );
}

/** The venue's name, or its id while the catalogue loads (or for a retired venue). */
export function useVenueName(): (id: string) => string {
  const venues = venuesOf(useCatalogue());
  return (id) => venues.find((v) => v.id === id)?.name ?? id;
}
