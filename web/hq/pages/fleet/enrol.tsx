import { useRef, useState } from 'preact/hooks';
import { hq } from '../../api.js';
import { useCatalogue, venuesOf } from '../../data.js';
import { Field, FormError, inputValue, useApiForm } from '../../form.js';
import { dateTime, t } from '../../i18n.js';
import { VenuePicker } from '../../pickers.js';
import { ReadOnlyNote, showToast } from '../../ui.js';

/** POST /hq-api/api/enrol-codes (docs/console.md "Pages"; docs/sync.md "API"). */
export interface EnrolCode {
  code: string;
  venueId: string;
  expiresAt: string;
  /** The exact line to type on the box (`venue-box sync enrol --central URL --code CODE`). */
  command: string;
}

/**
 * Enrolling a new box: a one-time code for a venue, shown once with its expiry and the command to type on the box
 * (docs/sync.md "Walk-through: a central, an enrolled box, orders seen at headquarters, an outage"). The central
 * keeps only the code's hash, so the code cannot be shown again.
 */
export function EnrolForm(props: { onEnrolCode?: () => void }) {
  const venues = venuesOf(useCatalogue());
  const [picked, setVenueId] = useState('');
  // The first venue until one is picked (the picker shows it selected): no effect that could undo a quick pick.
  const venueId = picked || venues[0]?.id || '';
  const [ttlHours, setTtlHours] = useState('24');
  const [made, setMade] = useState<EnrolCode | null>(null);
  const form = useApiForm();
  const canWrite = hq.canWrite();
  return (
    <section class="card fleet-enrol" aria-labelledby="fleet-enrol">
      <h2 id="fleet-enrol">{t('fleet.enrol')}</h2>
      <p class="muted">{t('fleet.enrolIntro')}</p>
      {!canWrite && <ReadOnlyNote />}
      <form
        data-testid="fleet-enrol-form"
        onSubmit={(e) => {
          e.preventDefault();
          setMade(null);
          void form.run(async () => {
            const body = { venueId, ...(ttlHours.trim() === '' ? {} : { ttlHours: Number(ttlHours) }) };
            setMade(await hq.send<EnrolCode>('POST', '/enrol-codes', body));
            props.onEnrolCode?.();
          });
        }}
      >
        <FormError form={form} />
        <fieldset class="row fleet-enrol-fields" disabled={!canWrite}>
          <Field label={t('fleet.venue')} error={form.fieldError('/venueId')}>
            {(a) => (
              <span class="fleet-picker">
                <VenuePicker input={a} value={venueId} onChange={setVenueId} />
              </span>
            )}
          </Field>
          <Field label={t('fleet.ttlHours')} error={form.fieldError('/ttlHours')}>
            {(a) => (
              <input
                {...a}
                type="number"
                min={1}
                max={168}
                step={1}
                name="ttlHours"
                data-testid="fleet-ttl"
                value={ttlHours}
                onInput={(e) => setTtlHours(inputValue(e))}
              />
            )}
          </Field>
          <button
            type="submit"
            class="btn primary"
            data-testid="fleet-make-code"
            disabled={!canWrite || form.busy || !venueId}
          >
            {t('fleet.makeCode')}
          </button>
        </fieldset>
      </form>
      {made && <EnrolCodeView made={made} />}
    </section>
  );
}

function EnrolCodeView({ made }: { made: EnrolCode }) {
  const commandRef = useRef<HTMLElement>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(made.command);
      showToast('info', t('fleet.copied'));
    } catch {
      // No clipboard (not a secure context, or refused): select the text so Ctrl+C copies it.
      const range = document.createRange();
      if (commandRef.current) range.selectNodeContents(commandRef.current);
      getSelection()?.removeAllRanges();
      getSelection()?.addRange(range);
      showToast('error', t('fleet.copyFailed'));
    }
  };
  return (
    <div class="fleet-code" data-testid="fleet-enrol-result" role="status">
      <dl class="fleet-facts">
        <dt>{t('fleet.code')}</dt>
        <dd>
          <code class="fleet-code-value" data-testid="fleet-enrol-code">
            {made.code}
          </code>
        </dd>
        <dt>{t('fleet.expiresAt')}</dt>
        <dd data-testid="fleet-enrol-expires" data-iso={made.expiresAt}>
          {dateTime(made.expiresAt)}
        </dd>
      </dl>
      <p class="fleet-command-label">{t('fleet.command')}</p>
      <code class="command" ref={commandRef} data-testid="fleet-enrol-command">
        {made.command}
      </code>
      <button type="button" class="btn" data-testid="fleet-copy" onClick={() => void copy()}>
        {t('fleet.copy')}
      </button>
    </div>
  );
}
