import { t } from '../../i18n.js';

/** The reports page (docs/console.md "Pages"). */
export function ReportsPage() {
  return <h1>{t('nav.reports')}</h1>;
}
