import { Store, useStore } from './store.js';

/** Polish and English; the venue's language (the box's screens.language) until a device switches. */
const PL = {
  loading: 'Ładowanie…', retry: 'Spróbuj ponownie', unreachable: 'Brak połączenia z boxem', offline: 'Offline: brak połączenia na żywo z boxem, łączę ponownie…',
  venue: 'Lokal', signOut: 'Wyloguj', signIn: 'Zaloguj', username: 'Użytkownik', password: 'Hasło', signInTitle: 'Logowanie obsługi',
  kioskHint: 'Kiosk dla gości: /kiosk?venue=…',
  'nav.kitchen': 'Kuchnia', 'nav.pickup': 'Wydawka', 'nav.tabs': 'Rachunki', 'nav.orders': 'Zamówienia', 'nav.manager': 'Kierownik',
  'status.NEW': 'Koszyk', 'status.ORDERED': 'Zamówione', 'status.READY': 'Gotowe', 'status.COMPLETED': 'Wydane', 'status.CANCELLED': 'Anulowane',
  'type.TAKE_AWAY': 'Na wynos', 'type.DELIVERY': 'Dostawa', 'type.DINE_IN': 'Na miejscu', 'type.DINE_IN_OPEN': 'Rachunek',
  station: 'Stanowisko', allStations: 'Wszystkie', ready: 'Gotowe', round: 'Runda', noOrders: 'Brak zamówień', sound: 'Dźwięk', soundOn: 'Włącz dźwięk',
  claimCode: 'Kod odbioru', find: 'Szukaj', complete: 'Wydaj', notFound: 'Brak otwartego zamówienia z tym kodem', readyOrders: 'Gotowe do odbioru', inKitchen: 'W kuchni',
  cancel: 'Anuluj', cancelReason: 'Powód anulowania', cancelConfirm: 'Anuluj zamówienie',
  newTab: 'Nowy rachunek', tabs: 'Otwarte rachunki', addRound: 'Dodaj', submitRound: 'Wyślij do kuchni', note: 'Uwaga dla kuchni', basketEmpty: 'Nic nie wybrano',
  unsent: 'Niewysłane', total: 'Razem', closeTab: 'Zamknij rachunek',
  filters: 'Filtry', since: 'Od', status: 'Status', type: 'Typ', more: 'Więcej', created: 'Utworzone', lines: 'Pozycje',
  soldOut: 'Wyprzedane', available: 'Dostępne', products: 'Produkty', printers: 'Drukarki', queue: 'Kolejka', jobs: 'Wydruki', reprint: 'Drukuj ponownie', lastError: 'Ostatni błąd',
  'printer.ok': 'OK', 'printer.paperNearEnd': 'Kończy się papier', 'printer.paperOut': 'Brak papieru', 'printer.offline': 'Offline', 'printer.unknown': 'Nieznany',
  stockHint: 'Dodaj towary, których stan chcesz widzieć (dokumenty PZ i inwentaryzacji dodają je same).', stock: 'Stan magazynu', item: 'Towar', unit: 'Jedn.', qty: 'Ilość', locked: 'Zablokowane', availableQty: 'Dostępne', addItem: 'Dodaj towar', refresh: 'Odśwież',
  pz: 'PZ: przyjęcie towaru', inventory: 'Inwentaryzacja', number: 'Numer', unitPrice: 'Cena jedn.', addRow: 'Dodaj wiersz', post: 'Zapisz dokument', posted: 'Zapisano dokument',
  sync: 'Synchronizacja', central: 'Centrala', backlog: 'Zaległe zdarzenia', lastSuccess: 'Ostatni sukces', notEnrolled: 'Box nie jest zapisany w centrali', catalogue: 'Katalog',
  none: 'brak', reason: 'Powód',
  'kiosk.title': 'Zamów tutaj', 'kiosk.basket': 'Koszyk', 'kiosk.order': 'Zamawiam', 'kiosk.empty': 'Dotknij produktu, aby dodać', 'kiosk.unavailable': 'Niedostępne',
  'kiosk.sending': 'Wysyłam zamówienie…', 'kiosk.yourCode': 'Twój kod odbioru', 'kiosk.preparing': 'Przygotowujemy', 'kiosk.ready': 'Gotowe! Odbierz przy ladzie',
  'kiosk.newOrder': 'Nowe zamówienie', 'kiosk.noVenue': 'Podaj lokal w adresie: /kiosk?venue=…', 'kiosk.remove': 'Usuń',
} as const;

export type Key = keyof typeof PL;

const EN: Record<Key, string> = {
  loading: 'Loading…', retry: 'Try again', unreachable: 'The box cannot be reached', offline: 'Offline: no live connection to the box, reconnecting…',
  venue: 'Venue', signOut: 'Sign out', signIn: 'Sign in', username: 'Username', password: 'Password', signInTitle: 'Staff sign-in',
  kioskHint: 'Customers\' kiosk: /kiosk?venue=…',
  'nav.kitchen': 'Kitchen', 'nav.pickup': 'Pick-up', 'nav.tabs': 'Tabs', 'nav.orders': 'Orders', 'nav.manager': 'Manager',
  'status.NEW': 'Basket', 'status.ORDERED': 'Ordered', 'status.READY': 'Ready', 'status.COMPLETED': 'Completed', 'status.CANCELLED': 'Cancelled',
  'type.TAKE_AWAY': 'Take-away', 'type.DELIVERY': 'Delivery', 'type.DINE_IN': 'Dine-in', 'type.DINE_IN_OPEN': 'Tab',
  station: 'Station', allStations: 'All', ready: 'Ready', round: 'Round', noOrders: 'No orders', sound: 'Sound', soundOn: 'Turn sound on',
  claimCode: 'Claim code', find: 'Find', complete: 'Hand over', notFound: 'No open order with this code', readyOrders: 'Ready for pick-up', inKitchen: 'In the kitchen',
  cancel: 'Cancel', cancelReason: 'Reason for cancelling', cancelConfirm: 'Cancel the order',
  newTab: 'New tab', tabs: 'Open tabs', addRound: 'Add', submitRound: 'Send to the kitchen', note: 'Note for the kitchen', basketEmpty: 'Nothing chosen',
  unsent: 'Not sent', total: 'Total', closeTab: 'Close the tab',
  filters: 'Filters', since: 'Since', status: 'Status', type: 'Type', more: 'More', created: 'Created', lines: 'Lines',
  soldOut: 'Sold out', available: 'Available', products: 'Products', printers: 'Printers', queue: 'Queue', jobs: 'Print jobs', reprint: 'Reprint', lastError: 'Last error',
  'printer.ok': 'OK', 'printer.paperNearEnd': 'Paper near end', 'printer.paperOut': 'Paper out', 'printer.offline': 'Offline', 'printer.unknown': 'Unknown',
  stockHint: 'Add the items whose stock you want to see (PZ and inventory documents add theirs).', stock: 'Stock', item: 'Item', unit: 'Unit', qty: 'Qty', locked: 'Locked', availableQty: 'Available', addItem: 'Add item', refresh: 'Refresh',
  pz: 'PZ: goods received', inventory: 'Inventory count', number: 'Number', unitPrice: 'Unit price', addRow: 'Add row', post: 'Post document', posted: 'Document posted',
  sync: 'Sync', central: 'Central', backlog: 'Backlog (events)', lastSuccess: 'Last success', notEnrolled: 'This box is not enrolled with a central', catalogue: 'Catalogue',
  none: 'none', reason: 'Reason',
  'kiosk.title': 'Order here', 'kiosk.basket': 'Basket', 'kiosk.order': 'Place order', 'kiosk.empty': 'Tap a product to add it', 'kiosk.unavailable': 'Unavailable',
  'kiosk.sending': 'Sending your order…', 'kiosk.yourCode': 'Your claim code', 'kiosk.preparing': 'Being prepared', 'kiosk.ready': 'Ready! Collect it at the counter',
  'kiosk.newOrder': 'New order', 'kiosk.noVenue': 'Name the venue in the address: /kiosk?venue=…', 'kiosk.remove': 'Remove',
};

type Lang = 'pl' | 'en';
const saved = localStorage.getItem('vb.lang');
export const language = new Store<Lang>(saved === 'en' || saved === 'pl' ? saved : 'pl');

/** The box's default, unless this device chose a language before. */
export function setInitialLanguage(lang: Lang): void {
  if (!localStorage.getItem('vb.lang')) language.set(lang === 'en' ? 'en' : 'pl');
  document.documentElement.lang = language.value;
}

export function t(key: Key | string): string {
  const dict: Record<string, string> = language.value === 'en' ? EN : PL;
  return dict[key] ?? key;
}

export function LanguageSwitch() {
  const lang = useStore(language);
  const other: Lang = lang === 'pl' ? 'en' : 'pl';
  return (
    <button type="button" class="btn ghost lang" data-testid="language" onClick={() => {
      localStorage.setItem('vb.lang', other);
      document.documentElement.lang = other;
      language.set(other);
    }}>{other.toUpperCase()}</button>
  );
}
