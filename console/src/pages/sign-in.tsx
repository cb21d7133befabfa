import { useState } from 'preact/hooks';
import { type Session, signIn } from '../session.ts';

/** Local accounts (POST /v1/auth/login). */
export function SignInForm({ onSignedIn, action }: { onSignedIn: (s: Session) => void; action: string }) {
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
          (err: unknown) => `The service could not be reached (${String(err)}).`,
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
