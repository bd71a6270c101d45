import { t } from '../../i18n.js';

/** The stock page (docs/console.md "Pages"). */
export function StockPage() {
  return <h1>{t('nav.stock')}</h1>;
}
