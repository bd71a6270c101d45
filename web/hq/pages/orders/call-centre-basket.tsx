import type { ApiForm } from '../../form.js';
import { Field, inputValue } from '../../form.js';
import { money, t } from '../../i18n.js';

export interface BasketLine {
  productId: string;
  name: string;
  price: string;
  /** As typed: the central checks it (1..999, whole), its refusal is shown by the line. */
  quantity: string;
}

/**
 * The basket: a line per product with its quantity as typed and the central's message for it, the menu's total,
 * and the send button (the form's submit).
 */
export function Basket(props: {
  basket: BasketLine[];
  setBasket: (change: (b: BasketLine[]) => BasketLine[]) => void;
  form: ApiForm;
  emptyBasket: boolean;
}) {
  const { basket, setBasket, form, emptyBasket } = props;
  const total = basket.reduce((s, l) => s + Number(l.price) * (Number(l.quantity) || 0), 0).toFixed(2);
  return (
    <section class="card" aria-labelledby="callcentre-basket-h">
      <h3 id="callcentre-basket-h">{t('orders.basket')}</h3>
      {form.fieldError('/buckets/0/lines') && (
        <p class="field-error" data-testid="field-error">
          {form.fieldError('/buckets/0/lines')}
        </p>
      )}
      {basket.length === 0 && (
        <p class={emptyBasket ? 'field-error' : 'muted'} data-testid={emptyBasket ? 'field-error' : undefined}>
          {t('orders.basketEmpty')}
        </p>
      )}
      <ul class="orders-basket" data-testid="basket">
        {basket.map((l, i) => (
          <li key={l.productId}>
            <Field
              label={`${l.name} (${money(l.price)})`}
              error={
                form.fieldError(`/buckets/0/lines/${i}/quantity`) ??
                form.fieldError(`/buckets/0/lines/${i}/productId`) ??
                form.fieldError(`/buckets/0/lines/${i}`)
              }
            >
              {(a) => (
                <input
                  {...a}
                  type="number"
                  inputMode="numeric"
                  class="qty"
                  data-testid={`qty-${l.productId}`}
                  value={l.quantity}
                  onInput={(e) => {
                    const q = inputValue(e);
                    setBasket((b) => b.map((x, j) => (j === i ? { ...x, quantity: q } : x)));
                  }}
                />
              )}
            </Field>
            <button
              type="button"
              class="btn small"
              aria-label={t('orders.removeLine', { name: l.name })}
              onClick={() => setBasket((b) => b.filter((_, j) => j !== i))}
            >
              {t('app.remove')}
            </button>
          </li>
        ))}
      </ul>
      <p class="orders-total">
        {t('orders.col.total')}: <strong data-testid="basket-total">{money(total)}</strong>
      </p>
      <p class="muted small">{t('orders.priceNote')}</p>
      <button type="submit" class="btn primary" data-testid="callcentre-submit">
        {t('orders.send')}
      </button>
    </section>
  );
}
