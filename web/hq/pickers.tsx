import { t } from './i18n.js';
import { useCatalogue, venuesOf } from './data.js';
import type { FieldInput } from './form.js';

/**
 * A venue picker; `all` adds "all venues" (value ''). Inside a Field, `input` gives it the field's id and ties the
 * field's error to it (aria-describedby, aria-invalid); alone it labels itself.
 */
export function VenuePicker(props: {
  value: string;
  onChange: (id: string) => void;
  all?: boolean;
  input?: FieldInput;
  testid?: string;
}) {
  const venues = venuesOf(useCatalogue());
  return (
    <select
      {...props.input}
      aria-label={props.input ? undefined : t('app.venue')}
      value={props.value}
      data-testid={props.testid ?? 'venue-picker'}
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
