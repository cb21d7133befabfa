import { useState } from 'preact/hooks';
import { NOT_ANSWERING } from '../load.tsx';
import type { IdpSettings } from '../oidc.ts';
import { idpSettings, type Session, signIn, startIdpSignIn } from '../session.ts';

/** Local accounts (POST /v1/auth/login), or the identity provider's sign-in when the API uses one. */
export function SignInForm({ onSignedIn, action }: { onSignedIn: (s: Session) => void; action: string }) {
  const idp = idpSettings();
  return idp ? (
    <IdpSignIn settings={idp} action={action} />
  ) : (
    <LocalSignIn onSignedIn={onSignedIn} action={action} />
  );
}

/** Leaves for the IdP's own sign-in pages; the browser comes back to this page once signed in (/console/callback). */
function IdpSignIn({ settings, action }: { settings: IdpSettings; action: string }) {
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState('');
  return (
    <div id="sign-in" class="card">
      <p>Sign in with your organization's account ({new URL(settings.issuer).host}).</p>
      <button
        type="button"
        id="idp-sign-in"
        disabled={busy}
        onClick={async () => {
          setBusy(true);
          setMessage('');
          await startIdpSignIn(settings, `${location.pathname}${location.search}`).catch((err: unknown) => {
            setBusy(false);
            setMessage(
              `The identity provider could not be reached (${(err as Error).message ?? String(err)}).`,
            );
          });
        }}
      >
        {busy ? 'Going to the identity provider…' : action}
      </button>
      <p class="error" role="alert">
        {message}
      </p>
    </div>
  );
}

function LocalSignIn({ onSignedIn, action }: { onSignedIn: (s: Session) => void; action: string }) {
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState('');
  return (
    <form
      id="sign-in"
      class="card"
      onSubmit={async (e) => {
        e.preventDefault();
        const form = new FormData(e.currentTarget);
        setBusy(true);
        setMessage('');
        const result = await signIn(String(form.get('email')), String(form.get('password'))).catch(
          () => NOT_ANSWERING,
        );
        setBusy(false);
        if (typeof result === 'string') setMessage(result);
        else onSignedIn(result);
      }}
    >
      <label>
        Email
        <input id="email" name="email" type="email" autocomplete="username" required />
      </label>
      <label>
        Password
        <input id="password" name="password" type="password" autocomplete="current-password" required />
      </label>
      <button type="submit" id="sign-in-button" disabled={busy}>
        {busy ? 'Signing in…' : action}
      </button>
      <p class="error" role="alert">
        {message}
      </p>
    </form>
  );
}
