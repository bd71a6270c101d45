import { Fragment } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { newUuid } from '../../../api.js';
import { hq } from '../../api.js';
import { type Live, liveOf, loadCatalogue, useCatalogue } from '../../data.js';
import { type ApiForm, Field, inputValue, useApiForm } from '../../form.js';
import { money, t } from '../../i18n.js';
import { DataTable } from '../../table.js';
import { type ChangeAnswer, ConfirmButton, changed, changeProps, RevNote, SaveError } from './common.js';
import { CHANNELS, type Channel, canonical } from './menu-tree.js';

/**
 * A venue as PUT /hq-api/api/venues/:id takes it (src/shared/catalogue-schemas.ts Venue, mirrored here because that
 * file needs Node's crypto).
 */
const DAYS = ['MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT', 'SUN'] as const;
type Day = (typeof DAYS)[number];
interface Interval {
  from: string;
  to: string;
}
interface ChannelConstraint {
  active: boolean;
  minDeliveryTime: string;
  minOrderValue?: string;
  week: Record<Day, Interval[]>;
}
interface Venue {
  id: string;
  name: string;
  menu: string;
  active: boolean;
  address: { street: string; number: string; postal: string; city: string; country: string };
  timeZone: string;
  geoPosition: { lat: number; lng: number };
  channelConstraints: Partial<Record<Channel, ChannelConstraint>>;
  warehouse: string;
}
/** The editor's copy: coordinates as typed (the central checks them and names the field). */
type VenueDraft = Omit<Venue, 'geoPosition'> & { geoPosition: { lat: string; lng: string } };

type VenueRow = Live<'venue'>;
const venueOf = (row: VenueRow) => row.data as unknown as Venue;

const emptyWeek = (): Record<Day, Interval[]> =>
  Object.fromEntries(DAYS.map((d) => [d, [] as Interval[]])) as Record<Day, Interval[]>;

function draftOf(v: Venue): VenueDraft {
  return {
    id: v.id,
    name: v.name,
    menu: v.menu,
    active: v.active,
    address: { ...v.address },
    timeZone: v.timeZone,
    geoPosition: { lat: String(v.geoPosition.lat), lng: String(v.geoPosition.lng) },
    channelConstraints: structuredClone(v.channelConstraints ?? {}),
    warehouse: v.warehouse,
  };
}

/** A coordinate as typed: a number when it reads as one, else the text (the central refuses it, naming the field). */
const coordinate = (text: string): number | string => {
  const trimmed = text.trim().replace(',', '.');
  return trimmed !== '' && Number.isFinite(Number(trimmed)) ? Number(trimmed) : text;
};

function bodyOf(d: VenueDraft): unknown {
  return {
    ...d,
    geoPosition: { lat: coordinate(d.geoPosition.lat), lng: coordinate(d.geoPosition.lng) },
  };
}

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

function newVenue(menu: string, warehouse: string): VenueDraft {
  return {
    id: newUuid(),
    name: '',
    menu,
    active: true,
    address: { street: '', number: '', postal: '', city: '', country: 'PL' },
    timeZone: 'Europe/Warsaw',
    geoPosition: { lat: '', lng: '' },
    channelConstraints: {},
    warehouse,
  };
}

const timeZones = (): string[] => {
  const intl = Intl as unknown as { supportedValuesOf?: (k: string) => string[] };
  return intl.supportedValuesOf?.('timeZone') ?? ['Europe/Warsaw'];
};

/**
 * One venue: name, address, coordinates, time zone, menu, warehouse, and per channel its minimum order and
 * opening hours. One PUT with If-Match of the row's rev (a new venue: If-Match "0", so it never replaces one).
 */
function VenueEditor(props: { row: VenueRow | undefined; select: (id: string) => void }) {
  const catalogue = useCatalogue();
  const menus = liveOf(catalogue, 'menu');
  const warehouses = liveOf(catalogue, 'warehouse');
  const { row } = props;
  const initial = () => (row ? draftOf(venueOf(row)) : newVenue(menus[0]?.id ?? '', warehouses[0]?.id ?? ''));
  const [draft, setDraft] = useState<VenueDraft>(initial);
  const [saved, setSaved] = useState(() => canonical(initial()));
  const [baseRev, setBaseRev] = useState<number | undefined>(row?.rev);
  const form = useApiForm();
  const dirty = canonical(draft) !== saved;
  useEffect(() => {
    if (row && !dirty && row.rev !== baseRev) {
      setDraft(draftOf(venueOf(row)));
      setSaved(canonical(draftOf(venueOf(row))));
      setBaseRev(row.rev);
    }
  }, [row?.rev]);
  const set = (change: (d: VenueDraft) => void) =>
    setDraft((d) => {
      const copy = structuredClone(d);
      change(copy);
      return copy;
    });
  const ch = changeProps(form.busy);
  const err = (p: string) => form.fieldError(p);
  const save = () =>
    form.run(async () => {
      const answer = await hq.send<ChangeAnswer>('PUT', `/venues/${draft.id}`, bodyOf(draft), {
        ifMatch: baseRev ?? 0,
      });
      setSaved(canonical(draft));
      if (answer.changed) setBaseRev(answer.rev);
      await changed(answer, t('catalogue.venueWhat', { name: draft.name }));
      if (!row) props.select(draft.id);
    });
  const loadCurrent = () =>
    void loadCatalogue(true).then((c) => {
      const fresh = liveOf(c, 'venue').find((v) => v.id === draft.id);
      if (!fresh) return;
      setDraft(draftOf(venueOf(fresh)));
      setSaved(canonical(draftOf(venueOf(fresh))));
      setBaseRev(fresh.rev);
    });
  const text = (label: string, pointer: string, value: string, onValue: (v: string) => void, testid?: string) => (
    <Field label={label} error={err(pointer)}>
      {(a) => <input {...a} {...ch} data-testid={testid} value={value} onInput={(e) => onValue(inputValue(e))} />}
    </Field>
  );
  return (
    <form
      class="card venue-editor"
      aria-labelledby="venue-h"
      data-testid="venue-editor"
      onSubmit={(e) => {
        e.preventDefault();
        void save();
      }}
    >
      <div class="row spread">
        <h2 id="venue-h">{row ? t('catalogue.venueTitle', { name: venueOf(row).name }) : t('catalogue.newVenue')}</h2>
        <div class="row">
          <button type="submit" class="btn primary" data-testid="venue-save" {...ch} disabled={ch.disabled || !dirty}>
            {t('app.save')}
          </button>
          {row && (
            <ConfirmButton
              label={t('catalogue.retireVenue')}
              confirm={t('catalogue.retireConfirm')}
              busy={form.busy}
              testid="venue-retire"
              onConfirm={() =>
                void form.run(async () => {
                  const answer = await hq.send<ChangeAnswer>('DELETE', `/venues/${row.id}`, undefined, {
                    ifMatch: row.rev,
                  });
                  await changed(answer, t('catalogue.venueWhat', { name: draft.name }));
                  props.select('');
                })
              }
            />
          )}
        </div>
      </div>
      <RevNote rev={baseRev} />
      {dirty && <p class="badge warn">{t('catalogue.unsaved')}</p>}
      <SaveError form={form} onLoadCurrent={loadCurrent} />
      <p class="muted small mono">
        {t('catalogue.id')}: {draft.id}
      </p>
      <div class="form-grid">
        {text(
          t('catalogue.name'),
          '/name',
          draft.name,
          (v) =>
            set((d) => {
              d.name = v;
            }),
          'venue-name',
        )}
        <Field label={t('catalogue.active')} error={err('/active')}>
          {(a) => (
            <input
              {...a}
              {...ch}
              type="checkbox"
              checked={draft.active}
              onChange={(e) =>
                set((d) => {
                  d.active = (e.currentTarget as HTMLInputElement).checked;
                })
              }
            />
          )}
        </Field>
        <Field label={t('catalogue.menu')} error={err('/menu')}>
          {(a) => (
            <select
              {...a}
              {...ch}
              data-testid="venue-menu"
              value={draft.menu}
              onChange={(e) =>
                set((d) => {
                  d.menu = (e.currentTarget as HTMLSelectElement).value;
                })
              }
            >
              {!menus.some((m) => m.id === draft.menu) && <option value={draft.menu}>{draft.menu || '–'}</option>}
              {menus.map((m) => (
                <option key={m.id} value={m.id}>
                  {m.id}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label={t('catalogue.warehouse')} error={err('/warehouse')}>
          {(a) => (
            <select
              {...a}
              {...ch}
              data-testid="venue-warehouse"
              value={draft.warehouse}
              onChange={(e) =>
                set((d) => {
                  d.warehouse = (e.currentTarget as HTMLSelectElement).value;
                })
              }
            >
              {!warehouses.some((w) => w.id === draft.warehouse) && (
                <option value={draft.warehouse}>{draft.warehouse || '–'}</option>
              )}
              {warehouses.map((w) => (
                <option key={w.id} value={w.id}>
                  {w.data.name}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label={t('catalogue.timeZone')} error={err('/timeZone')}>
          {(a) => (
            <>
              <input
                {...a}
                {...ch}
                list="catalogue-time-zones"
                value={draft.timeZone}
                onInput={(e) =>
                  set((d) => {
                    d.timeZone = inputValue(e);
                  })
                }
              />
              <datalist id="catalogue-time-zones">
                {timeZones().map((z) => (
                  <option key={z} value={z} />
                ))}
              </datalist>
            </>
          )}
        </Field>
      </div>
      <fieldset>
        <legend>{t('catalogue.address')}</legend>
        <div class="form-grid">
          {(['street', 'number', 'postal', 'city', 'country'] as const).map((k) =>
            text(t(`catalogue.address.${k}`), `/address/${k}`, draft.address[k], (v) =>
              set((d) => {
                d.address[k] = v;
              }),
            ),
          )}
        </div>
      </fieldset>
      <fieldset>
        <legend>{t('catalogue.position')}</legend>
        <div class="form-grid">
          {text(
            t('catalogue.lat'),
            '/geoPosition/lat',
            draft.geoPosition.lat,
            (v) =>
              set((d) => {
                d.geoPosition.lat = v;
              }),
            'venue-lat',
          )}
          {text(
            t('catalogue.lng'),
            '/geoPosition/lng',
            draft.geoPosition.lng,
            (v) =>
              set((d) => {
                d.geoPosition.lng = v;
              }),
            'venue-lng',
          )}
        </div>
      </fieldset>
      <div class="channels-grid">
        {CHANNELS.map((c) => (
          <ChannelEditor
            key={c}
            channel={c}
            value={draft.channelConstraints[c]}
            form={form}
            onChange={(v) =>
              set((d) => {
                if (v) d.channelConstraints[c] = v;
                else delete d.channelConstraints[c];
              })
            }
          />
        ))}
      </div>
    </form>
  );
}

const DEFAULT_MIN_TIME: Record<Channel, string> = { DELIVERY: '00:45:00', TAKE_AWAY: '00:15:00', DINE_IN: '00:20:00' };

/** One channel of the venue: sold on it or not, its minimum order and delivery time, its hours per day. */
function ChannelEditor(props: {
  channel: Channel;
  value: ChannelConstraint | undefined;
  form: ApiForm;
  onChange: (v: ChannelConstraint | undefined) => void;
}) {
  const { channel, value, form } = props;
  const ch = changeProps(form.busy);
  const base = `/channelConstraints/${channel}`;
  const set = (change: (v: ChannelConstraint) => void) => {
    const copy = structuredClone(value!);
    change(copy);
    props.onChange(copy);
  };
  const name = t(`catalogue.channel.${channel}`);
  return (
    <fieldset class="channel" data-testid={`hours-${channel}`}>
      <legend>{t('catalogue.channelTitle', { channel: name })}</legend>
      {!value ? (
        <button
          type="button"
          class="btn small"
          {...ch}
          onClick={() =>
            props.onChange({ active: true, minDeliveryTime: DEFAULT_MIN_TIME[channel], week: emptyWeek() })
          }
        >
          {t('catalogue.channelAdd')}
        </button>
      ) : (
        <>
          <div class="form-grid">
            <Field label={t('catalogue.channelActive')} error={form.fieldError(`${base}/active`)}>
              {(a) => (
                <input
                  {...a}
                  {...ch}
                  type="checkbox"
                  checked={value.active}
                  onChange={(e) =>
                    set((v) => {
                      v.active = (e.currentTarget as HTMLInputElement).checked;
                    })
                  }
                />
              )}
            </Field>
            <Field
              label={t('catalogue.minOrder')}
              error={form.fieldError(`${base}/minOrderValue`)}
              hint={value.minOrderValue ? money(value.minOrderValue) : t('catalogue.minOrderNone')}
            >
              {(a) => (
                <input
                  {...a}
                  {...ch}
                  inputMode="decimal"
                  data-testid={`min-order-${channel}`}
                  value={value.minOrderValue ?? ''}
                  onInput={(e) =>
                    set((v) => {
                      const text = inputValue(e).trim().replace(',', '.');
                      if (text === '') delete v.minOrderValue;
                      else v.minOrderValue = text;
                    })
                  }
                />
              )}
            </Field>
            <Field
              label={t('catalogue.minTime')}
              error={form.fieldError(`${base}/minDeliveryTime`)}
              hint={t('catalogue.minTimeHint')}
            >
              {(a) => (
                <input
                  {...a}
                  {...ch}
                  value={value.minDeliveryTime}
                  onInput={(e) =>
                    set((v) => {
                      v.minDeliveryTime = inputValue(e);
                    })
                  }
                />
              )}
            </Field>
          </div>
          <table class="hours">
            <caption class="sr-only">{t('catalogue.hoursOf', { channel: name })}</caption>
            <thead>
              <tr>
                <th scope="col">{t('catalogue.day')}</th>
                <th scope="col">{t('catalogue.intervals')}</th>
              </tr>
            </thead>
            <tbody>
              {DAYS.map((day) => (
                <tr key={day} data-testid={`day-${channel}-${day}`}>
                  <th scope="row">{t(`catalogue.day.${day}`)}</th>
                  <td>
                    {value.week[day].length === 0 && <span class="muted">{t('catalogue.closed')}</span>}
                    {value.week[day].map((iv, i) => (
                      <span class="interval" key={i}>
                        {(['from', 'to'] as const).map((end) => {
                          const pointer = `${base}/week/${day}/${i}/${end}`;
                          const error = form.fieldError(pointer);
                          const id = `hours-${channel}-${day}-${i}-${end}`;
                          return (
                            <Fragment key={end}>
                              {end === 'to' && (
                                <span aria-hidden="true" class="dash">
                                  –
                                </span>
                              )}
                              <span class={`time ${error ? 'invalid' : ''}`}>
                                <label for={id} class="sr-only">
                                  {t('catalogue.intervalEnd', {
                                    day: t(`catalogue.day.${day}`),
                                    n: i + 1,
                                    end: t(`catalogue.${end}`),
                                  })}
                                </label>
                                <input
                                  id={id}
                                  {...ch}
                                  class="time-input"
                                  inputMode="numeric"
                                  placeholder="HH:MM"
                                  data-testid={id}
                                  aria-invalid={error ? true : undefined}
                                  aria-describedby={error ? `${id}-err` : undefined}
                                  value={iv[end]}
                                  onInput={(e) =>
                                    set((v) => {
                                      v.week[day][i]![end] = inputValue(e);
                                    })
                                  }
                                />
                                {error && (
                                  <span class="field-error" id={`${id}-err`} data-testid="field-error">
                                    {error}
                                  </span>
                                )}
                              </span>
                            </Fragment>
                          );
                        })}
                        <button
                          type="button"
                          class="btn small ghost"
                          data-testid={`remove-interval-${channel}-${day}-${i}`}
                          {...ch}
                          aria-label={t('catalogue.intervalRemove', { day: t(`catalogue.day.${day}`), n: i + 1 })}
                          onClick={() => set((v) => void v.week[day].splice(i, 1))}
                        >
                          ×
                        </button>
                      </span>
                    ))}
                    <button
                      type="button"
                      class="btn small"
                      data-testid={`add-interval-${channel}-${day}`}
                      {...ch}
                      aria-label={t('catalogue.intervalAddTo', { day: t(`catalogue.day.${day}`) })}
                      onClick={() => set((v) => void v.week[day].push({ from: '10:00', to: '22:00' }))}
                    >
                      {t('catalogue.intervalAdd')}
                    </button>
                    {form.fieldError(`${base}/week/${day}`) && (
                      <span class="field-error">{form.fieldError(`${base}/week/${day}`)}</span>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <div class="row">
            <button
              type="button"
              class="btn small"
              data-testid={`copy-monday-${channel}`}
              {...ch}
              onClick={() =>
                set((v) => {
                  for (const d of DAYS) v.week[d] = structuredClone(v.week.MON);
                })
              }
            >
              {t('catalogue.copyMonday')}
            </button>
            <button type="button" class="btn small danger" {...ch} onClick={() => props.onChange(undefined)}>
              {t('catalogue.channelRemove')}
            </button>
          </div>
        </>
      )}
    </fieldset>
  );
}
