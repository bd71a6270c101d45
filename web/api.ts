import { ApiError, send } from './http.js';
import { Store } from './store.js';

/**
 * Every call goes through the box's public API, as any client's would (docs/api.md "The API"): the token endpoint,
 * bearer tokens, Idempotency-Key on order commands. The screens hold no rule of their own: what the box
 * refuses is shown with the box's own message.
 */
export interface Bootstrap {
  tenant: string;
  clientId: string;
  clientSecret: string;
  language: 'pl' | 'en';
  /** ISO 4217: the currency of the prices (docs/screens.md "Money and time"). */
  currency: string;
  venue: string | null;
}

let bootstrapValue: Bootstrap | undefined;

export async function loadBootstrap(): Promise<Bootstrap> {
  if (bootstrapValue) return bootstrapValue;
  const res = await send('/screens-api/bootstrap', { method: 'GET' });
  bootstrapValue = (await res.json()) as Bootstrap;
  return bootstrapValue;
}

export function bootstrap(): Bootstrap {
  if (!bootstrapValue) throw new Error('bootstrap not loaded');
  return bootstrapValue;
}

export interface TokenAnswer {
  access_token: string;
  refresh_token: string;
  expires_in: number;
  scope: string;
  UUID: string;
}

/**
 * The token endpoint with the screens' OAuth client (docs/api.md "Walk-through"). The device token of a staff
 * sign-in is left to the browser: the box sets it as an HttpOnly cookie, sent back by this same-origin fetch, so
 * no script here (nor an injected one) can read it (docs/api.md "Sign-in throttling").
 */
export async function tokenRequest(form: Record<string, string>): Promise<TokenAnswer> {
  const b = bootstrap();
  const res = await send('/auth-oauth2/oauth/token', {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded;charset=UTF-8',
      'x-tenant': b.tenant,
      authorization: `Basic ${btoa(`${b.clientId}:${b.clientSecret}`)}`,
    },
    body: new URLSearchParams(form).toString(),
  });
  return (await res.json()) as TokenAnswer;
}

export interface Tokens {
  accessToken: string;
  refreshToken: string;
  /** Epoch ms at which the access token expires. */
  expiresAt: number;
  userId: string;
  scope: string;
  username: string;
}

const toTokens = (t: TokenAnswer, username: string): Tokens => ({
  accessToken: t.access_token,
  refreshToken: t.refresh_token,
  expiresAt: Date.now() + t.expires_in * 1000,
  userId: t.UUID,
  scope: t.scope,
  username,
});

/**
 * A holder of tokens: a signed-in staff member (kept in localStorage, so a reload keeps the session) or a kiosk's
 * anonymous customer (memory only). Renews the access token with the refresh token a minute before it expires,
 * one refresh at a time (each refresh token works once: docs/api.md "Token revocation").
 */
export class Session {
  readonly tokens: Store<Tokens | null>;
  private refreshing: Promise<string> | undefined;

  constructor(
    private readonly storageKey: string | null,
    /** The token endpoint with the app's own client: the box's screens' by default. */
    private readonly requestToken: (form: Record<string, string>) => Promise<TokenAnswer> = tokenRequest,
  ) {
    let saved: Tokens | null = null;
    try {
      saved = storageKey ? (JSON.parse(localStorage.getItem(storageKey) ?? 'null') as Tokens | null) : null;
    } catch {
      saved = null;
    }
    this.tokens = new Store(saved);
    // Another tab of the same app renewed or ended the session: take its tokens, or this tab would present a refresh
    // token already spent, which the server takes for a stolen one and revokes the whole session.
    if (storageKey) {
      window.addEventListener('storage', (e) => {
        if (e.key !== storageKey) return;
        try {
          this.tokens.set(e.newValue ? (JSON.parse(e.newValue) as Tokens) : null);
        } catch {
          this.tokens.set(null);
        }
      });
    }
  }

  private save(tokens: Tokens | null): void {
    if (this.storageKey) {
      if (tokens) localStorage.setItem(this.storageKey, JSON.stringify(tokens));
      else localStorage.removeItem(this.storageKey);
    }
    this.tokens.set(tokens);
  }

  async signIn(username: string, password: string): Promise<void> {
    this.save(toTokens(await this.requestToken({ grant_type: 'password', username, password }), username));
  }

  async signInAnonymous(): Promise<void> {
    this.save(
      toTokens(
        await this.requestToken({ grant_type: 'password', scope: 'read', username: 'anonymous', password: '' }),
        'anonymous',
      ),
    );
  }

  signOut(): void {
    this.save(null);
  }

  /** A valid access token, refreshed first when it is about to expire (or `force`). */
  async accessToken(force = false): Promise<string> {
    const tokens = this.tokens.value;
    if (!tokens) throw new ApiError('not signed in', 401);
    if (!force && tokens.expiresAt - Date.now() > 60_000) return tokens.accessToken;
    this.refreshing ??= this.refresh(tokens).finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  private async refresh(tokens: Tokens): Promise<string> {
    try {
      const next = toTokens(
        await this.requestToken({ grant_type: 'refresh_token', refresh_token: tokens.refreshToken }),
        tokens.username,
      );
      this.save(next);
      return next.accessToken;
    } catch (err) {
      // A refused refresh token (expired, revoked, reused) ends the session; an unreachable box does not.
      if (err instanceof ApiError && err.status >= 400 && err.status < 500) this.save(null);
      throw err;
    }
  }

  /** An API call with this session's bearer token; a 401 refreshes the token once and retries. */
  async call<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
    const attempt = async (token: string) =>
      send(path, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...headers,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    let res: Response;
    try {
      res = await attempt(await this.accessToken());
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 401) throw err;
      res = await attempt(await this.accessToken(true));
    }
    const text = await res.text();
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /**
   * An order command (docs/api.md "Safe retries: `Idempotency-Key`"): one new key per command, the same key for each
   * retry after a network failure, so a command the box confirmed but whose answer was lost applies once.
   */
  async command(path: string, body: unknown): Promise<CommandConfirmation> {
    const key = newUuid();
    let wait = 500;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.call<CommandConfirmation>('POST', path, body, { 'Idempotency-Key': key });
      } catch (err) {
        if (!(err instanceof ApiError) || err.status !== 0 || attempt >= 4) throw err;
        await new Promise((r) => setTimeout(r, wait));
        wait *= 2;
      }
    }
  }
}

export interface CommandConfirmation {
  correlationId: string;
  orderId: string;
  lines: string[];
}

/**
 * A random UUID v4. crypto.randomUUID exists only in secure contexts (HTTPS, localhost), and the box is opened
 * as http://<box>:8080 on the LAN; getRandomValues works everywhere.
 */
export function newUuid(): string {
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

export const staff = new Session('vb.session');
