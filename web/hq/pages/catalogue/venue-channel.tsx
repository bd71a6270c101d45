import { type ApiForm, Field, inputValue } from '../../form.js';
import { money, t } from '../../i18n.js';
import { changeProps } from './common.js';
import type { Channel } from './menu-tree.js';
import { WeekHours } from './opening-hours.js';
import { type ChannelConstraint, DAYS, emptyWeek } from './venue-model.js';

const DEFAULT_MIN_TIME: Record<Channel, string> = { DELIVERY: '00:45:00', TAKE_AWAY: '00:15:00', DINE_IN: '00:20:00' };

/** One channel of the venue: sold on it or not, its minimum order and delivery time, its hours per day. */
export function ChannelEditor(props: {
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
          <WeekHours channel={channel} value={value} form={form} set={set} />
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
