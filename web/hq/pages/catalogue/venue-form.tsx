import { useEffect, useState } from 'preact/hooks';
import { hq } from '../../api.js';
import { liveOf, loadCatalogue, useCatalogue } from '../../data.js';
import { Field, inputValue, useApiForm } from '../../form.js';
import { t } from '../../i18n.js';
import { type ChangeAnswer, ConfirmButton, changed, changeProps, RevNote, SaveError } from './common.js';
import { CHANNELS, canonical } from './menu-tree.js';
import { ChannelEditor } from './venue-channel.js';
import { bodyOf, draftOf, newVenue, type VenueDraft, type VenueRow, venueOf } from './venue-model.js';

const timeZones = (): string[] => {
  const intl = Intl as unknown as { supportedValuesOf?: (k: string) => string[] };
  return intl.supportedValuesOf?.('timeZone') ?? ['Europe/Warsaw'];
};

/**
 * One venue: name, address, coordinates, time zone, menu, warehouse, and per channel its minimum order and
 * opening hours. One PUT with If-Match of the row's rev (a new venue: If-Match "0", so it never replaces one).
 */
export function VenueEditor(props: { row: VenueRow | undefined; select: (id: string) => void }) {
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
