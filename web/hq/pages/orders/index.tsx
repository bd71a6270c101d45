import { navigate, route } from '../../../router.js';
import { useStore } from '../../../store.js';
import { t } from '../../i18n.js';
import { SubNav } from '../../ui.js';
import { CallCentre } from './call-centre.js';
import { OrderView } from './order-view.js';
import { OrderSearch } from './search.js';

/**
 * The orders page (docs/console.md "Pages"): orders of every venue searched and opened (`/orders?id=...`: lines,
 * totals, versions), and the call centre (`/orders?tab=new`): an order taken at headquarters for a venue's box.
 */
export function OrdersPage() {
  const { query } = useStore(route);
  const id = query.get('id');
  if (id) return <OrderView id={id} />;
  const tab = query.get('tab') === 'new' ? 'new' : 'search';
  return (
    <div class="pad" data-testid="orders-page">
      <h1>{t('nav.orders')}</h1>
      <SubNav
        items={[
          { id: 'search', label: t('orders.tab.search') },
          { id: 'new', label: t('orders.tab.new') },
        ]}
        current={tab}
        onSelect={(next) => navigate(next === 'new' ? '/orders?tab=new' : '/orders')}
      />
      {tab === 'new' ? <CallCentre /> : <OrderSearch />}
    </div>
  );
}
