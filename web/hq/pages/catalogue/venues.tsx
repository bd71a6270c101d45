import { liveOf, useCatalogue } from '../../data.js';
import { t } from '../../i18n.js';
import { DataTable } from '../../table.js';
import { changeProps } from './common.js';
import { VenueEditor } from './venue-form.js';
import { venueOf } from './venue-model.js';

/** Venues: the list, and the editor of one (`?tab=venues&id=<venue>` or `id=new`). */
export function VenuesView(props: { id: string; select: (id: string) => void }) {
  const catalogue = useCatalogue();
  const venues = liveOf(catalogue, 'venue')
    .map((r) => ({ row: r, venue: venueOf(r) }))
    .sort((a, b) => a.venue.name.localeCompare(b.venue.name));
  const editing = venues.find((v) => v.row.id === props.id);
  return (
    <div class="stack">
      <section class="card" aria-labelledby="venues-h">
        <div class="row spread">
          <h2 id="venues-h">{t('catalogue.venues')}</h2>
          <button
            type="button"
            class="btn"
            data-testid="venue-new"
            {...changeProps()}
            onClick={() => props.select('new')}
          >
            {t('catalogue.newVenue')}
          </button>
        </div>
        <DataTable
          csvName="venues"
          testid="venue-table"
          rows={venues}
          rowKey={(v) => v.row.id}
          onRow={(v) => props.select(v.row.id)}
          columns={[
            {
              label: t('catalogue.name'),
              cell: (v) => (
                <a
                  href={`/catalogue?tab=venues&id=${v.row.id}`}
                  data-testid={`venue-${v.row.id}`}
                  onClick={(e) => {
                    e.preventDefault();
                    props.select(v.row.id);
                  }}
                >
                  {v.venue.name}
                </a>
              ),
              csv: (v) => v.venue.name,
            },
            { label: t('catalogue.city'), cell: (v) => v.venue.address.city },
            {
              label: t('catalogue.active'),
              cell: (v) => (v.venue.active ? t('catalogue.yes') : t('catalogue.no')),
              csv: (v) => String(v.venue.active),
            },
            { label: t('catalogue.menu'), cell: (v) => v.venue.menu },
            { label: t('catalogue.rev'), cell: (v) => v.row.rev, numeric: true },
          ]}
        />
      </section>
      {props.id === 'new' && <VenueEditor key="new" row={undefined} select={props.select} />}
      {editing && <VenueEditor key={editing.row.id} row={editing.row} select={props.select} />}
      {props.id && props.id !== 'new' && !editing && catalogue && <p class="muted">{t('catalogue.notFound')}</p>}
    </div>
  );
}
