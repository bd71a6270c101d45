import { Fragment } from 'preact';
import { type ApiForm, inputValue } from '../../form.js';
import { t } from '../../i18n.js';
import { changeProps } from './common.js';
import type { Channel } from './menu-tree.js';
import { type ChannelConstraint, DAYS } from './venue-model.js';

/**
 * A channel's opening hours: per day of the week its intervals (none: closed that day), each end an input of its
 * own with its label and the central's message for it.
 */
export function WeekHours(props: {
  channel: Channel;
  value: ChannelConstraint;
  form: ApiForm;
  set: (change: (v: ChannelConstraint) => void) => void;
}) {
  const { channel, value, form, set } = props;
  const ch = changeProps(form.busy);
  const base = `/channelConstraints/${channel}`;
  const name = t(`catalogue.channel.${channel}`);
  return (
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
  );
}
