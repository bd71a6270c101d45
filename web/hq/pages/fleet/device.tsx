import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { navigate } from '../../../router.js';
import { hq } from '../../api.js';
import { FormError, useApiForm } from '../../form.js';
import { ago, dateTime, number, t } from '../../i18n.js';
import { useVenueName } from '../../pickers.js';
import { Dialog, ReadOnlyNote, showToast } from '../../ui.js';
import { contactText, type Device, deviceName, offsetText, StateBadge, updateText } from './model.js';

/** One box at `/fleet?id=`: everything the central knows of it, and revoking it. */
export function DeviceDetails(props: { id: string; device: Device | undefined; onChanged: () => void }) {
  const venueName = useVenueName();
  const d = props.device;
  if (!d)
    return (
      <section class="card" aria-labelledby="fleet-device-title" data-testid="fleet-details">
        <h2 id="fleet-device-title">{t('fleet.notFound', { id: props.id })}</h2>
        <BackLink />
      </section>
    );
  const venue = d.venueName ?? venueName(d.venue);
  const fact = (label: string, value: ComponentChildren, testid?: string) => (
    <>
      <dt>{label}</dt>
      <dd data-testid={testid}>{value}</dd>
    </>
  );
  return (
    <section class="card fleet-details" aria-labelledby="fleet-device-title" data-testid="fleet-details">
      <div class="row spread">
        <h2 id="fleet-device-title">{t('fleet.details', { name: deviceName(d) })}</h2>
        <BackLink />
      </div>
      <dl class="fleet-facts">
        {fact(t('fleet.id'), <code>{d.id}</code>)}
        {fact(t('fleet.venue'), venue)}
        {fact(t('fleet.state'), <StateBadge d={d} />, 'fleet-details-state')}
        {fact(t('fleet.version'), d.version ?? '–')}
        {fact(t('fleet.arch'), d.arch ?? '–')}
        {fact(t('fleet.update'), d.update?.detail ? `${updateText(d)} (${d.update.detail})` : updateText(d))}
        {fact(t('fleet.lastContact'), contactText(d.lastContactAt))}
        {fact(t('fleet.lag'), number(d.lagEvents), 'fleet-details-lag')}
        {fact(
          t('fleet.oldestPending'),
          d.oldestPendingAt
            ? `${dateTime(d.oldestPendingAt)} (${t('fleet.ago', { ago: ago(d.oldestPendingAt) })})`
            : '–',
        )}
        {fact(t('fleet.clockOffset'), offsetText(d.clockOffsetMs))}
        {fact(t('fleet.deadLetters'), number(d.deadLetters), 'fleet-details-dead')}
        {fact(t('fleet.catalogueRev'), number(d.catalogueRev ?? null))}
        {fact(t('fleet.head'), `${d.head.epoch} / ${d.head.seq}`)}
        {fact(t('fleet.keyId'), <code>{d.keyId}</code>)}
        {fact(t('fleet.enrolledAt'), dateTime(d.enrolledAt))}
      </dl>
      {d.status === 'active' && <Revoke device={d} venue={venue} onChanged={props.onChanged} />}
    </section>
  );
}

function BackLink() {
  return (
    <a
      href="/fleet"
      onClick={(e) => {
        e.preventDefault();
        navigate('/fleet');
      }}
    >
      {t('fleet.backToList')}
    </a>
  );
}

/** Revoking, after a confirmation: POST /hq-api/api/devices/:id/revoke; the box is refused from then on. */
function Revoke(props: { device: Device; venue: string; onChanged: () => void }) {
  const [open, setOpen] = useState(false);
  const form = useApiForm();
  const canWrite = hq.canWrite();
  const name = deviceName(props.device);
  return (
    <div class="fleet-revoke">
      {!canWrite && <ReadOnlyNote />}
      <button
        type="button"
        class="btn danger"
        data-testid="fleet-revoke"
        disabled={!canWrite}
        onClick={() => {
          form.clear();
          setOpen(true);
        }}
      >
        {t('fleet.revoke')}
      </button>
      <Dialog title={t('fleet.revokeTitle')} open={open} onClose={() => setOpen(false)}>
        <form
          data-testid="fleet-revoke-dialog"
          onSubmit={(e) => {
            e.preventDefault();
            void form
              .run(() => hq.send('POST', `/devices/${encodeURIComponent(props.device.id)}/revoke`))
              .then((ok) => {
                if (!ok) return;
                setOpen(false);
                showToast('info', t('fleet.revoked.toast', { name }));
                props.onChanged();
              });
          }}
        >
          <FormError form={form} />
          <p>{t('fleet.revokeText', { name, venue: props.venue })}</p>
          <div class="row">
            <button type="submit" class="btn danger" data-testid="fleet-revoke-confirm" disabled={form.busy}>
              {t('fleet.revokeConfirm')}
            </button>
            {/* The dialog opens on "cancel": Enter alone never revokes a box. */}
            <button type="button" class="btn" autofocus onClick={() => setOpen(false)}>
              {t('app.cancel')}
            </button>
          </div>
        </form>
      </Dialog>
    </div>
  );
}
