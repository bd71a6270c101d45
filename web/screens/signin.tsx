import { useState } from 'preact/hooks';
import { staff } from '../api.js';
import { t } from '../i18n.js';
import { errorText } from '../ui.js';

/** Staff sign in with their username and password (the token endpoint, the screens' OAuth client). */
export function SignIn() {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  return (
    <form
      class="card signin"
      data-testid="signin"
      onSubmit={(e) => {
        e.preventDefault();
        setBusy(true);
        setError(null);
        staff
          .signIn(username.trim(), password)
          .catch((err) => setError(errorText(err)))
          .finally(() => setBusy(false));
      }}
    >
      <h1>{t('signInTitle')}</h1>
      <label>
        {t('username')}
        <input
          name="username"
          autocomplete="username"
          autocapitalize="none"
          value={username}
          required
          onInput={(e) => setUsername((e.currentTarget as HTMLInputElement).value)}
        />
      </label>
      <label>
        {t('password')}
        <input
          name="password"
          type="password"
          autocomplete="current-password"
          value={password}
          required
          onInput={(e) => setPassword((e.currentTarget as HTMLInputElement).value)}
        />
      </label>
      {error && (
        <p class="form-error" data-testid="signin-error">
          {error}
        </p>
      )}
      <button type="submit" class="btn primary" disabled={busy}>
        {t('signIn')}
      </button>
      <p class="muted small">{t('kioskHint')}</p>
    </form>
  );
}
