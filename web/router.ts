import { Store } from './store.js';

/** The page the app shows: location.pathname and its query (the box serves index.html at each, README "Screens"). */
export const route = new Store({ path: location.pathname, query: new URLSearchParams(location.search) });

export function navigate(to: string): void {
  history.pushState(null, '', to);
  const url = new URL(to, location.href);
  route.set({ path: url.pathname, query: url.searchParams });
}

window.addEventListener('popstate', () =>
  route.set({ path: location.pathname, query: new URLSearchParams(location.search) }),
);
