import { useEffect, useState } from 'preact/hooks';
import type { StandbyStatus } from '../../src/modules/standby/status.js';
import { dateTime } from '../format.js';
import { send } from '../http.js';
import { language, t } from '../i18n.js';
import { useStore } from '../store.js';
import { LoadError } from '../ui.js';

/**
 * The box's part in a pair (docs/operations.md "A standby box"), from GET /standby-api/status: no token, the same
 * answer `venue-box standby status` prints. Polled every 10 s, as the sync status is.
 */
function useStandbyStatus(): { status: StandbyStatus | null; error: unknown; load(): void } {
  const [status, setStatus] = useState<StandbyStatus | null>(null);
  const [error, setError] = useState<unknown>(null);
  const load = () => {
    send('/standby-api/status', { method: 'GET' })
      .then((res) => res.json() as Promise<StandbyStatus>)
      .then((s) => {
        setError(null);
        setStatus(s);
      }, setError);
  };
  useEffect(() => {
    load();
    const timer = setInterval(load, 10_000);
    return () => clearInterval(timer);
  }, []);
  return { status, error, load };
}

/**
 * A primary whose standby does not hold every confirmed order: while it is not 'synchronous' (alone, catching
 * up, being copied, fenced), a failure of this box loses what only it holds.
 */
const notInStep = (s: StandbyStatus): boolean => s.role === 'primary' && s.peer !== null && s.state !== 'synchronous';

/** A state this screen has no words for (a newer box's) is shown as the box names it. */
function stateText(state: string): string {
  const key = `standby.state.${state}`;
  const text = t(key);
  return text === key ? state : text;
}

/** The warning in words (never colour alone), announced by screen readers when it appears. */
function NotInStep() {
  return (
    <p class="standby-warning" role="alert" data-testid="standby-warning">
      <span aria-hidden="true">⚠ </span>
      {t('standby.notInStep')}
    </p>
  );
}

/** "Zapasowy box / Standby box": role, state, peer, lag, last takeover, and the warning when alone. */
export function StandbyPanel(props: { timeZone: string }) {
  const lang = useStore(language);
  const { status, error, load } = useStandbyStatus();
  if (error && !status) return <LoadError error={error} retry={load} />;
  if (!status) return <p class="muted">{t('loading')}</p>;
  const paired = status.peer !== null;
  const number = (n: number, digits = 0) =>
    n.toLocaleString(lang, { minimumFractionDigits: digits, maximumFractionDigits: digits });
  return (
    <section
      class="card standby"
      aria-labelledby="standby-title"
      data-testid="standby"
      data-role={status.role}
      data-state={status.state}
    >
      <h2 id="standby-title">{t('standby.title')}</h2>
      {notInStep(status) && <NotInStep />}
      <dl class="facts">
        <dt>{t('standby.role')}</dt>
        <dd data-testid="standby-role">{t(`standby.role.${status.role}`)}</dd>
        <dt>{t('standby.state')}</dt>
        <dd data-testid="standby-state">{paired ? stateText(status.state) : '—'}</dd>
        <dt>{t('standby.peer')}</dt>
        <dd data-testid="standby-peer">{status.peer?.url ?? '—'}</dd>
        <dt>{t('standby.lag')}</dt>
        <dd data-testid="standby-lag">
          {paired ? `${number(status.lagBytes)} B, ${number(status.lagSeconds, 1)} s` : '—'}
        </dd>
        <dt>{t('standby.lastTakeover')}</dt>
        <dd data-testid="standby-last-takeover">
          {status.lastTakeoverAt ? dateTime(status.lastTakeoverAt, props.timeZone) : t('standby.never')}
        </dd>
      </dl>
    </section>
  );
}

/** The warning alone, above every part of the manager screen, so it is seen without opening the panel. */
export function StandbyWarning() {
  const { status } = useStandbyStatus();
  return status && notInStep(status) ? <NotInStep /> : null;
}
