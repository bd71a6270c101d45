import { createHash } from 'node:crypto';
import { OAuthError } from '../oauth-error.js';
import { verifySecret } from '../passwords.js';
import type { OAuthStore, SignInUser } from './store.js';
import type { LoginThrottle } from './throttle.js';

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

// Verified against when the user is unknown, so that neither timing nor throttling reveals usernames.
const DUMMY_HASH = 'scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';

/**
 * Client-secret and staff-password checks, both through the login throttle (./throttle.ts): the throttle
 * counts failures per account, per account and client address, and per address, and caps scrypt work.
 */
export function createCredentialChecks(store: Pick<OAuthStore, 'clientSecretHash' | 'user'>, throttle: LoginThrottle) {
  // A kiosk asks for tokens all day with the same client secret; scrypt each time would cost ~50 ms of CPU
  // on a Pi, so a verified secret is remembered by digest together with the stored hash it matched: a
  // secret changed by provisioning changes the stored hash, and the old secret is checked (and fails) again.
  // A remembered secret skips the throttle too: a kiosk is never refused because someone else guessed.
  const verifiedClients = new Set<string>();
  // Checks of a client secret under way, by the same digest: after a restart (nothing remembered) every kiosk
  // and phone asks at once with the one client secret, and they all wait for one scrypt instead of each
  // queueing for its own (or being refused when the queue is full).
  const clientChecks = new Map<string, Promise<boolean>>();

  async function verifyClient(digest: string, check: () => Promise<boolean>): Promise<boolean> {
    const shared = clientChecks.get(digest);
    if (shared) {
      const ok = await shared.catch(() => undefined);
      // undefined: that check was refused by the throttle of its own address, so this one is made on its own.
      if (ok !== undefined) return ok;
    }
    const own = check();
    clientChecks.set(digest, own);
    try {
      return await own;
    } finally {
      if (clientChecks.get(digest) === own) clientChecks.delete(digest);
    }
  }

  return {
    /** Throws invalid_client (401), or temporarily_unavailable (429) while throttled. */
    async checkClient(tenantId: string, clientId: string, clientSecret: string, clientAddress: string): Promise<void> {
      const stored = await store.clientSecretHash(tenantId, clientId);
      const digest = sha256(`${stored}\0${clientSecret}`);
      if (stored && verifiedClients.has(digest)) return;
      // An unknown client costs no scrypt but still counts as a failure: guessing client ids is throttled too.
      const ok = await verifyClient(digest, () =>
        throttle.verify(`client\0${tenantId}\0${clientId}`, clientAddress, () =>
          stored ? verifySecret(clientSecret, stored) : Promise.resolve(false),
        ),
      );
      if (!ok) throw new OAuthError('invalid_client', 'unknown client or wrong client secret for this tenant');
      if (verifiedClients.size > 1000) verifiedClients.clear();
      verifiedClients.add(digest);
    },

    /**
     * The user whose password this is; throws invalid_grant (400) or temporarily_unavailable (429). `knownDevice`:
     * the device id of a valid device token of this user (./device-tokens.ts), throttled on its own budget.
     */
    async checkPassword(
      tenantId: string,
      username: string,
      password: string,
      clientAddress: string,
      knownDevice?: string,
    ): Promise<SignInUser> {
      const user = await store.user(tenantId, username);
      const ok = await throttle.verify(
        `user\0${tenantId}\0${username}`,
        clientAddress,
        () => verifySecret(password, user?.passwordHash ?? DUMMY_HASH),
        knownDevice,
      );
      if (!user || !ok) throw new OAuthError('invalid_grant', 'wrong username or password');
      return user;
    },
  };
}
