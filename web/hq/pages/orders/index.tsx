import { t } from '../../i18n.js';

/** The orders page (docs/console.md "Pages"). */
export function OrdersPage() {
  return <h1>{t('nav.orders')}</h1>;
}
