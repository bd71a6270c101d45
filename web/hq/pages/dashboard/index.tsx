import { t } from '../../i18n.js';

/** The dashboard page (docs/console.md "Pages"). */
export function DashboardPage() {
  return <h1>{t('nav.dashboard')}</h1>;
}
