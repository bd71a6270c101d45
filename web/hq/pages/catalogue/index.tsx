import { t } from '../../i18n.js';

/** The catalogue page (docs/console.md "Pages"). */
export function CataloguePage() {
  return <h1>{t('nav.catalogue')}</h1>;
}
