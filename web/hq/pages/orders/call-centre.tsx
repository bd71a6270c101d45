import { useState } from 'preact/hooks';
import type { HqOrderBody } from '../../../../src/shared/hq-inbox.js';
import { hq } from '../../api.js';
import { useCatalogue, venuesOf } from '../../data.js';
import { Field, FormError, inputValue, useApiForm } from '../../form.js';
import { t } from '../../i18n.js';
import { VenuePicker } from '../../pickers.js';
import { ReadOnlyNote } from '../../ui.js';
import { Basket, type BasketLine } from './call-centre-basket.js';
import { type MenuProduct, MenuPicker, venueMenu } from './call-centre-menu.js';
import { useEntryWatch } from './entries.js';
import { RecentCentralOrders, SentOrder } from './sent-orders.js';
import { type InboxEntry, ORDER_TYPES } from './types.js';

const newId = () => crypto.randomUUID();

/**
 * The call centre: an order taken at headquarters for one venue (POST /hq-api/api/orders, docs/sync.md "Orders
 * created at the central"). The order's id is made here once and kept until the order is accepted, so sending
 * again after a lost answer is the same order (the central answers 200 with the same entry). The box prices it
 * and checks hours and sold-out flags: the total shown is the menu's, what counts is the box's.
 */
export function CallCentre() {
  const catalogue = useCatalogue();
  const venues = venuesOf(catalogue);
  const canWrite = hq.canWrite();
  const form = useApiForm();
  const [venueId, setVenueId] = useState('');
  const venue = venueId || venues[0]?.id || '';
  const [orderType, setOrderType] = useState<(typeof ORDER_TYPES)[number]>('TAKE_AWAY');
  const [contact, setContact] = useState({ name: '', phone: '', email: '' });
  const [basket, setBasket] = useState<BasketLine[]>([]);
  const [orderId, setOrderId] = useState(newId);
  const [emptyBasket, setEmptyBasket] = useState(false);
  const [sent, setSent] = useState<InboxEntry | null>(null);
  const watch = useEntryWatch(sent);
  const { root, soldOut } = venueMenu(catalogue, venue);

  const add = (p: MenuProduct) => {
    setEmptyBasket(false);
    setBasket((b) => {
      const at = b.findIndex((l) => l.productId === p.id);
      if (at < 0)
        return [...b, { productId: p.id, name: p.details.literals.name ?? p.id, price: p.price, quantity: '1' }];
      return b.map((l, i) => (i === at ? { ...l, quantity: String((Number(l.quantity) || 0) + 1) } : l));
    });
  };

  const submit = () => {
    // The central takes an order with no lines (a basket to fill later); a call centre's order without one is a
    // slip of the hand, so it is not sent.
    if (basket.length === 0) {
      setEmptyBasket(true);
      return;
    }
    const c = Object.fromEntries(Object.entries(contact).filter(([, v]) => v.trim() !== '')) as HqOrderBody['contact'];
    const body: HqOrderBody = {
      id: orderId,
      orderType,
      buckets: [{ venue, lines: basket.map((l) => ({ productId: l.productId, quantity: Number(l.quantity) })) }],
      ...(c && Object.keys(c).length > 0 ? { contact: c } : {}),
    };
    void form.run(async () => {
      const entry = await hq.send<InboxEntry>('POST', '/orders', body);
      setSent(entry);
      setBasket([]);
      setContact({ name: '', phone: '', email: '' });
      setOrderId(newId());
    });
  };

  const contactField = (k: keyof typeof contact, type: 'text' | 'tel' | 'email', autocomplete: string) => (
    <Field label={t(`orders.contact.${k}`)} error={form.fieldError(`/contact/${k}`)}>
      {(a) => (
        <input
          {...a}
          // One of text/tel/email (preact's input types are a union that does not take a variable of them).
          type={type as 'text'}
          name={`contact-${k}`}
          autocomplete={autocomplete}
          data-testid={`contact-${k}`}
          value={contact[k]}
          onInput={(e) => setContact({ ...contact, [k]: inputValue(e) })}
        />
      )}
    </Field>
  );

  return (
    <>
      <section aria-labelledby="callcentre-h">
        <h2 id="callcentre-h">{t('orders.newOrder')}</h2>
        {!canWrite && <ReadOnlyNote />}
        <form
          data-testid="callcentre-form"
          onSubmit={(e) => {
            e.preventDefault();
            submit();
          }}
        >
          <fieldset class="plain" disabled={!canWrite || form.busy}>
            <legend class="sr-only">{t('orders.newOrder')}</legend>
            <FormError form={form} />
            <div class="card form-grid">
              <Field label={t('app.venue')} error={form.fieldError('/buckets/0/venue') ?? form.fieldError('/buckets')}>
                {(a) => (
                  <VenuePicker
                    input={a}
                    value={venue}
                    onChange={(v) => {
                      setVenueId(v);
                      setBasket([]);
                    }}
                  />
                )}
              </Field>
              <Field label={t('orders.col.type')} error={form.fieldError('/orderType')}>
                {(a) => (
                  <select
                    {...a}
                    name="orderType"
                    data-testid="order-type"
                    value={orderType}
                    onChange={(e) => setOrderType(inputValue(e) as typeof orderType)}
                  >
                    {ORDER_TYPES.map((o) => (
                      <option key={o} value={o}>
                        {t(`orders.type.${o}`)}
                      </option>
                    ))}
                  </select>
                )}
              </Field>
              {contactField('name', 'text', 'name')}
              {contactField('phone', 'tel', 'tel')}
              {contactField('email', 'email', 'email')}
            </div>
            <div class="orders-take">
              <MenuPicker root={root} soldOut={soldOut} add={add} />
              <Basket basket={basket} setBasket={setBasket} form={form} emptyBasket={emptyBasket} />
            </div>
          </fieldset>
        </form>
        {watch.entry && <SentOrder entry={watch.entry} arrived={watch.orderArrived} />}
      </section>
      <RecentCentralOrders lastSent={sent?.id} />
    </>
  );
}
