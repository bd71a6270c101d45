import { t } from '../../i18n.js';

/** The fleet page (docs/console.md "Pages"). */
export function FleetPage() {
  return <h1>{t('nav.fleet')}</h1>;
}
