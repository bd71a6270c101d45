import { navigate, route } from '../../../router.js';
import { useStore } from '../../../store.js';
import { hq, withQuery } from '../../api.js';
import { loadCatalogue, useCatalogue } from '../../data.js';
import { t, useLanguage } from '../../i18n.js';
import { ReadOnlyNote, SubNav, showError } from '../../ui.js';
import { ClientsView, StaffView } from './accounts.js';
import { BoxesPanel } from './common.js';
import { MenusView } from './menus.js';
import { SoldOutView } from './soldout.js';
import { VenuesView } from './venues.js';
import { WarehousesView } from './warehouses.js';

const TABS = ['menus', 'venues', 'staff', 'clients', 'warehouses', 'soldout'] as const;
type Tab = (typeof TABS)[number];

/**
 * The catalogue page (docs/console.md "Pages"): what headquarters sends to the boxes (menus, venues, staff users,
 * clients, warehouses, sold-out flags), each sub-view at `/catalogue?tab=...&id=...`, and beside every change the
 * boxes with the catalogue rev each applied.
 */
export function CataloguePage() {
  useLanguage();
  const { query } = useStore(route);
  const catalogue = useCatalogue();
  const asked = query.get('tab') ?? '';
  const tab: Tab = (TABS as readonly string[]).includes(asked) ? (asked as Tab) : 'menus';
  const id = query.get('id') ?? '';
  const select = (to: Tab, which = '') => navigate(withQuery('/catalogue', { tab: to, id: which }));
  const within = (which: string) => select(tab, which);
  return (
    <div class="catalogue-page">
      <div class="row spread">
        <h1>{t('nav.catalogue')}</h1>
        <span class="muted" data-testid="catalogue-rev">
          {catalogue ? t('catalogue.centralRev', { rev: catalogue.rev }) : ''}
        </span>
      </div>
      {!hq.canWrite() && <ReadOnlyNote />}
      <SubNav
        items={TABS.map((x) => ({ id: x, label: t(`catalogue.tab.${x}`) }))}
        current={tab}
        onSelect={(x) => select(x as Tab)}
      />
      <CatalogueLoad />
      <div class="catalogue-body" data-testid="catalogue-view" data-tab={tab}>
        {tab === 'menus' && <MenusView id={id} select={within} />}
        {tab === 'venues' && <VenuesView id={id} select={within} />}
        {tab === 'staff' && <StaffView />}
        {tab === 'clients' && <ClientsView />}
        {tab === 'warehouses' && <WarehousesView />}
        {tab === 'soldout' && <SoldOutView id={id} select={within} />}
      </div>
      <BoxesPanel />
    </div>
  );
}

/** A failed read of the catalogue, with a retry (the views show "loading" until it comes). */
function CatalogueLoad() {
  const catalogue = useCatalogue();
  if (catalogue) return null;
  return (
    <p class="muted" data-testid="catalogue-loading">
      {t('app.loading')}{' '}
      <button type="button" class="btn small ghost" onClick={() => void loadCatalogue(true).catch(showError)}>
        {t('app.retry')}
      </button>
    </p>
  );
}
