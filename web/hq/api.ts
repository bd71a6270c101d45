import { Session, type TokenAnswer } from '../api.js';
import { ApiError, send } from '../http.js';
import { Store } from '../store.js';

/**
 * The headquarters console's calls: the central's own HQ API (docs/sync.md "API"), as any client's would be, with
 * the console's public OAuth client `hq-console` (no secret: a browser cannot keep one). The console holds no rule
 * of its own: what the central refuses is shown with the central's message, next to the field it names.
 */
export interface HqBootstrap {
  /** Set when the central serves exactly one tenant; otherwise the sign-in asks for it. */
  tenant: string | null;
  tenantName: string | null;
  clientId: string;
}

const TENANT_KEY = 'vb.hq.tenant';
let bootstrapValue: HqBootstrap = { tenant: null, tenantName: null, clientId: 'hq-console' };
/** The tenant the user signs in to: the central's only one, or the one typed at the last sign-in. */
export const tenant = new Store<string>(localStorage.getItem(TENANT_KEY) ?? '');

export async function loadHqBootstrap(): Promise<HqBootstrap> {
  const res = await send('/hq-app/bootstrap', { method: 'GET' });
  bootstrapValue = (await res.json()) as HqBootstrap;
  if (bootstrapValue.tenant) tenant.set(bootstrapValue.tenant);
  return bootstrapValue;
}

export const hqBootstrap = (): HqBootstrap => bootstrapValue;

export function setTenant(id: string): void {
  localStorage.setItem(TENANT_KEY, id);
  tenant.set(id);
}

async function hqTokenRequest(form: Record<string, string>): Promise<TokenAnswer> {
  const res = await send('/auth-oauth2/oauth/token', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded;charset=UTF-8', 'x-tenant': tenant.value },
    body: new URLSearchParams({ ...form, client_id: bootstrapValue.clientId }).toString(),
  });
  return (await res.json()) as TokenAnswer;
}

export const session = new Session('vb.hq.session', hqTokenRequest);

/**
 * Whether someone signed in on this device and did not sign out. While it holds, a session that ends (its
 * refresh refused: expired, revoked) asks to sign in again over the page instead of leaving it, so a half-typed
 * form survives; the call that found the session ended is made again after.
 */
export const signedIn = new Store<boolean>(session.tokens.value !== null);
export const reauthNeeded = new Store<boolean>(false);
let reauthWaiters: { resume(): void; abandon(): void }[] = [];
/** Who signed in last: the sign-in dialog of an ended session offers the same username. */
let lastUsername = session.tokens.value?.username ?? '';

session.tokens.subscribe((tokens) => {
  if (!tokens) return;
  lastUsername = tokens.username;
  signedIn.set(true);
  if (reauthNeeded.value) {
    reauthNeeded.set(false);
    const waiting = reauthWaiters;
    reauthWaiters = [];
    for (const w of waiting) w.resume();
  }
});

export function signOut(): void {
  signedIn.set(false);
  reauthNeeded.set(false);
  // Calls waiting for the same user to sign in again are dropped, never made for whoever signs in next.
  const waiting = reauthWaiters;
  reauthWaiters = [];
  for (const w of waiting) w.abandon();
  session.signOut();
}

/** The session ended under a call: its refresh was refused (the session cleared its tokens) or it had none. */
const sessionEnded = (err: unknown) =>
  err instanceof ApiError && err.status >= 400 && err.status < 500 && session.tokens.value === null;

async function withSession<T>(call: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      return await call();
    } catch (err) {
      if (!sessionEnded(err) || !signedIn.value) throw err;
      await new Promise<void>((resume, abandon) => {
        reauthWaiters.push({ resume, abandon: () => abandon(err) });
        reauthNeeded.set(true);
      });
    }
  }
}

type Query = Record<string, string | number | undefined | null>;

export function withQuery(path: string, query: Query = {}): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const text = q.toString();
  return text ? `${path}?${text}` : path;
}

export const hq = {
  /** A read of the HQ API (`path` is under /hq-api/api, or absolute when it starts with /hq-). */
  get<T>(path: string, query?: Query): Promise<T> {
    return withSession(() => session.call<T>('GET', withQuery(apiPath(path), query)));
  },
  /**
   * A change. `ifMatch`: the catalogue rev the edited row had when loaded; the central refuses the change (412
   * revisionChanged) if someone changed the row since (docs/sync.md "Down: the catalogue").
   */
  send<T>(method: 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body?: unknown, o: { ifMatch?: number } = {}) {
    const headers: Record<string, string> = o.ifMatch === undefined ? {} : { 'if-match': `"${o.ifMatch}"` };
    return withSession(() => session.call<T>(method, apiPath(path), body, headers));
  },
  /** Raw bytes (an image upload). */
  upload<T>(path: string, bytes: Blob): Promise<T> {
    return withSession(async () => {
      const token = await session.accessToken();
      const res = await send(apiPath(path), {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream' },
        body: bytes,
      });
      return (await res.json()) as T;
    });
  },
  /** Whether the signed-in user may change anything (scope `write`); the central refuses changes otherwise. */
  canWrite(): boolean {
    return (session.tokens.value?.scope ?? '').split(' ').includes('write');
  },
  username: (): string => session.tokens.value?.username ?? lastUsername,
};

const apiPath = (path: string) => (path.startsWith('/hq-') ? path : `/hq-api/api${path}`);
