import { useEffect, useState } from 'preact/hooks';
import { ApiError } from '../../../http.js';
import { Store, useStore } from '../../../store.js';
import { hq, session } from '../../api.js';
import { loadCatalogue } from '../../data.js';
import { type ApiForm, errorText, FormError } from '../../form.js';
import { ago, dateTime, t } from '../../i18n.js';
import { DataTable } from '../../table.js';
import { showToast } from '../../ui.js';
import { useVenueName } from '../../pickers.js';

/**
 * What every change of the catalogue answers (PUT/PATCH/DELETE under /hq-api/api/{venues,menus,...}: the tenant's
 * catalogue rev after it; src/central/modules/catalogue/writer.ts ChangeResult).
 */
export interface ChangeAnswer {
  rev: number;
  changed: boolean;
}

/** The last change made on this page: its rev, so the boxes panel can say which box has it. */
export const lastChange = new Store<{ rev: number; what: string } | null>(null);

/** After a change the central accepted: its rev remembered and announced, the catalogue read again. */
export async function changed(answer: ChangeAnswer, what: string): Promise<void> {
  lastChange.set({ rev: answer.rev, what });
  showToast('info', t('catalogue.savedRev', { what, rev: answer.rev }));
  await loadCatalogue(true);
}

/** Props of every control that changes something: disabled for a read-only user (the central refuses anyway). */
export function changeProps(busy = false): { disabled: boolean; 'data-change': string } {
  return { disabled: busy || !hq.canWrite(), 'data-change': '' };
}

/** 412 `revisionChanged`: someone changed the row since it was loaded (docs/sync.md, If-Match). */
export const isConflict = (err: unknown): err is ApiError =>
  err instanceof ApiError && (err.status === 412 || err.codes.some((c) => c.code === 'revisionChanged'));

/**
 * The form's refusal; for a 412 the central's message and the choice to load the current version. Until the user
 * chooses, their own edit stays as they typed it: nothing is overwritten silently.
 */
export function SaveError(props: { form: ApiForm; onLoadCurrent: () => void }) {
  const { error } = props.form;
  if (!isConflict(error)) return <FormError form={props.form} />;
  return (
    <div class="alert warn" role="alert" data-testid="conflict">
      <p>
        <strong>{t('catalogue.conflictTitle')}</strong> {errorText(error)}
      </p>
      <p>{t('catalogue.conflictKeep')}</p>
      <button
        type="button"
        class="btn"
        data-testid="load-current"
        onClick={() => {
          props.form.clear();
          props.onLoadCurrent();
        }}
      >
        {t('catalogue.loadCurrent')}
      </button>
    </div>
  );
}

/** The row's rev as the central gave it, and the last saved rev of this page. */
export function RevNote(props: { rev: number | undefined }) {
  const last = useStore(lastChange);
  return (
    <p class="muted small" data-testid="row-rev">
      {props.rev === undefined ? t('catalogue.newRow') : t('catalogue.rowRev', { rev: props.rev })}
      {last && (
        <>
          {' · '}
          <span data-testid="saved-rev">{t('catalogue.lastSaved', { what: last.what, rev: last.rev })}</span>
        </>
      )}
    </p>
  );
}

/**
 * GET /hq-api/api/catalogue/status (docs/sync.md): the rev the boxes will get and the rev each one applied. The
 * central that serves this console always mounts it (src/central/modules/devices/hq-routes.ts), so nothing else
 * is asked.
 */
interface CatalogueStatus {
  rev: number;
  devices: {
    deviceId: string;
    name: string | null;
    venueId: string;
    catalogueRev: number;
    catalogueRevAt: string | null;
    lastContactAt: string | null;
  }[];
}

/**
 * "What the boxes will get and when they got it": each box with the catalogue rev it applied, read every 5 s; a
 * box has the last change once its rev reached the change's.
 */
export function BoxesPanel() {
  const last = useStore(lastChange);
  const venueName = useVenueName();
  const [status, setStatus] = useState<CatalogueStatus | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const tick = () => {
      hq.get<CatalogueStatus>('/catalogue/status').then(
        (s) => {
          if (!live) return;
          setStatus(s);
          setError(null);
        },
        (err: unknown) => live && setError(err),
      );
      timer = setTimeout(tick, 5000);
    };
    tick();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [last?.rev]);
  const want = last?.rev ?? status?.rev ?? 0;
  return (
    <section class="card boxes-panel" aria-labelledby="boxes-h" data-testid="boxes-panel">
      <h2 id="boxes-h">{t('catalogue.boxes')}</h2>
      <p class="muted">
        {t('catalogue.boxesCentralRev', { rev: status?.rev ?? '–' })}
        {last && ` · ${t('catalogue.boxesWant', { what: last.what, rev: last.rev })}`}
      </p>
      {error !== null && <p class="form-error">{errorText(error)}</p>}
      {status && (
        <DataTable
          csvName="catalogue-boxes"
          testid="boxes-table"
          rows={status.devices}
          rowKey={(d) => d.deviceId}
          columns={[
            { label: t('catalogue.box'), cell: (d) => d.name ?? d.deviceId, csv: (d) => d.name ?? d.deviceId },
            { label: t('app.venue'), cell: (d) => venueName(d.venueId), csv: (d) => d.venueId },
            { label: t('catalogue.appliedRev'), cell: (d) => d.catalogueRev, numeric: true },
            {
              label: t('catalogue.hasIt'),
              cell: (d) =>
                d.catalogueRev >= want ? (
                  <span class="badge ok" data-testid="box-has-it">
                    {d.catalogueRevAt
                      ? t('catalogue.hasItSince', { at: dateTime(d.catalogueRevAt) })
                      : t('catalogue.hasItYes')}
                  </span>
                ) : (
                  <span class="badge warn" data-testid="box-waiting">
                    {t('catalogue.hasItNo')}
                  </span>
                ),
              csv: (d) => (d.catalogueRev >= want ? (d.catalogueRevAt ?? 'yes') : 'no'),
            },
            {
              label: t('catalogue.lastContact'),
              cell: (d) => (d.lastContactAt ? t('catalogue.ago', { ago: ago(d.lastContactAt) }) : '–'),
              csv: (d) => d.lastContactAt,
            },
          ]}
        />
      )}
    </section>
  );
}

/**
 * A menu image the central holds (`/media/<sha256>.<ext>`, docs/sync.md "Menu images") shown to headquarters: the
 * central serves it at /hq-api/api/media/<name> behind the bearer token, which an <img> cannot send, so it is read
 * as bytes and shown from an object URL. An https address is shown as it is; a path of the box (the demo's) is not shown.
 */
export function useImageUrl(url: string): string | undefined {
  const [shown, setShown] = useState<string | undefined>(undefined);
  useEffect(() => {
    const m = /^\/media\/([0-9a-f]{64}\.(?:png|jpg|webp))$/.exec(url);
    if (!m) {
      // A path of the box's own (the demo's /media/zurek.jpg) is not the central's to show.
      setShown(/^https?:\/\//.test(url) ? url : undefined);
      return;
    }
    let objectUrl: string | undefined;
    let live = true;
    void (async () => {
      try {
        const res = await fetch(`/hq-api/api/media/${m[1]}`, {
          headers: { authorization: `Bearer ${await session.accessToken()}` },
        });
        if (!res.ok || !live) return;
        objectUrl = URL.createObjectURL(await res.blob());
        setShown(objectUrl);
      } catch {
        setShown(undefined);
      }
    })();
    return () => {
      live = false;
      if (objectUrl) URL.revokeObjectURL(objectUrl);
    };
  }, [url]);
  return shown;
}

/** A button that asks once more before retiring or clearing something. */
export function ConfirmButton(props: {
  label: string;
  confirm: string;
  onConfirm: () => void;
  busy?: boolean;
  testid?: string;
}) {
  const [asking, setAsking] = useState(false);
  if (!asking)
    return (
      <button
        type="button"
        class="btn small danger"
        data-testid={props.testid}
        {...changeProps(props.busy)}
        onClick={() => setAsking(true)}
      >
        {props.label}
      </button>
    );
  return (
    <span class="confirm">
      <button
        type="button"
        class="btn small danger"
        data-testid={props.testid ? `${props.testid}-yes` : undefined}
        {...changeProps(props.busy)}
        onClick={() => {
          setAsking(false);
          props.onConfirm();
        }}
      >
        {props.confirm}
      </button>
      <button type="button" class="btn small ghost" onClick={() => setAsking(false)}>
        {t('app.cancel')}
      </button>
    </span>
  );
}

/** A form that adds a row: its If-Match "0" met a row of that id, so a 412 here says the id is taken. */
export function CreateError(props: { form: ApiForm }) {
  const { error } = props.form;
  if (!isConflict(error)) return <FormError form={props.form} />;
  return (
    <p class="form-error" role="alert" data-testid="form-error">
      {t('catalogue.exists')} ({errorText(error)})
    </p>
  );
}
