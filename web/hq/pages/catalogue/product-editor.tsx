import { useState } from 'preact/hooks';
import { hq } from '../../api.js';
import { type Catalogue, loadCatalogue } from '../../data.js';
import { type ApiForm, Field, FormError, inputValue, useApiForm } from '../../form.js';
import { t } from '../../i18n.js';
import { type ChangeAnswer, changed, changeProps } from './common.js';
import { ImageField } from './image-field.js';
import { CHANNELS, type Channel, type Path, type Product, pointerOf } from './menu-tree.js';
import { IdField, LiteralFields, NodeErrors } from './node-fields.js';

/** PATCH /hq-api/api/products/:productId/price answers the rev and the live menus it changed. */
interface PriceEverywhere extends ChangeAnswer {
  menus: string[];
}

/**
 * The selected product: id, price (this menu's, or at once in every menu), channels, texts and image. Changes go
 * to the menu's draft; only "price everywhere" is a call of its own.
 */
export function ProductEditor(props: {
  product: Product;
  path: Path;
  keys: string[];
  isNew: boolean;
  form: ApiForm;
  onChange: (p: Product) => void;
  onPriceEverywhere: (productId: string, price: string, fresh: Catalogue) => void;
}) {
  const { product, form } = props;
  const pointer = pointerOf(props.path);
  const ch = changeProps(form.busy);
  const priceForm = useApiForm();
  const [everywhere, setEverywhere] = useState<PriceEverywhere | null>(null);
  const channels = product.channels ?? [...CHANNELS];
  const setChannel = (c: Channel, on: boolean) => {
    const next = CHANNELS.filter((x) => (x === c ? on : channels.includes(x)));
    const p: Product = { ...product, channels: next };
    // All channels: the field is left out (the schema's "all when absent").
    if (next.length === CHANNELS.length) delete p.channels;
    props.onChange(p);
  };
  return (
    <div class="node-editor" data-testid="product-editor">
      <h3>{t('catalogue.product')}</h3>
      <NodeErrors
        form={form}
        pointer={pointer}
        shown={[`${pointer}/id`, `${pointer}/price`, `${pointer}/channels`, `${pointer}/details/media`]}
      />
      <div class="form-grid">
        <IdField
          id={product.id}
          pointer={pointer}
          isNew={props.isNew}
          form={form}
          onChange={(id) => props.onChange({ ...product, id })}
        />
        <Field
          label={t('catalogue.price')}
          error={form.fieldError(`${pointer}/price`) ?? priceForm.fieldError('/price')}
          hint={t('catalogue.priceHint')}
        >
          {(a) => (
            <input
              {...a}
              {...ch}
              inputMode="decimal"
              data-testid="product-price"
              value={product.price}
              onInput={(e) => props.onChange({ ...product, price: inputValue(e).replace(',', '.') })}
            />
          )}
        </Field>
      </div>
      <div class="price-everywhere">
        <button
          type="button"
          class="btn small"
          data-testid="price-everywhere"
          {...changeProps(priceForm.busy)}
          disabled={priceForm.busy || !hq.canWrite() || props.isNew}
          onClick={() =>
            void priceForm.run(async () => {
              const answer = await hq.send<PriceEverywhere>(
                'PATCH',
                `/products/${encodeURIComponent(product.id)}/price`,
                { price: product.price },
              );
              setEverywhere(answer);
              await changed(answer, t('catalogue.priceWhat', { id: product.id }));
              props.onPriceEverywhere(product.id, product.price, await loadCatalogue());
            })
          }
        >
          {t('catalogue.priceEverywhere')}
        </button>
        <span class="muted small">{t('catalogue.priceEverywhereHint')}</span>
        <FormError form={priceForm} />
        {everywhere && (
          <p data-testid="price-everywhere-result" role="status">
            {t('catalogue.priceEverywhereDone', { rev: everywhere.rev, menus: everywhere.menus.join(', ') })}
          </p>
        )}
      </div>
      <fieldset class="channels">
        <legend>{t('catalogue.channels')}</legend>
        {CHANNELS.map((c) => (
          <label key={c} class="check">
            <input
              type="checkbox"
              {...ch}
              data-testid={`channel-${c}`}
              checked={channels.includes(c)}
              onChange={(e) => setChannel(c, (e.currentTarget as HTMLInputElement).checked)}
            />
            {t(`catalogue.channel.${c}`)}
          </label>
        ))}
        {form.fieldError(`${pointer}/channels`) && (
          <span class="field-error">{form.fieldError(`${pointer}/channels`)}</span>
        )}
      </fieldset>
      <LiteralFields
        literals={product.details.literals}
        keys={props.keys}
        pointer={pointer}
        form={form}
        onChange={(literals) => props.onChange({ ...product, details: { ...product.details, literals } })}
      />
      <ImageField product={product} pointer={pointer} form={form} onChange={props.onChange} />
    </div>
  );
}
