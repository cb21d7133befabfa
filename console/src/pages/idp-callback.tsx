// /console/callback: where the identity provider sends the browser back with an authorization code (the console's
// redirect URI, registered at the IdP). The code is traded once, then the page the sign-in started from is shown.
import { useEffect, useState } from 'preact/hooks';
import { navigate, pageUrl } from '../router.ts';
import { completeIdpSignIn, idpSettings, type Session } from '../session.ts';

export function IdpCallbackPage({
  query,
  onSignedIn,
}: {
  query: URLSearchParams;
  onSignedIn: (s: Session) => void;
}) {
  const [message, setMessage] = useState('');
  document.title = 'Signing in · Agent control plane';
  useEffect(() => {
    const settings = idpSettings();
    if (!settings) {
      setMessage('This console does not sign in through an identity provider.');
      return;
    }
    completeIdpSignIn(settings, query).then(
      ({ session, returnTo }) => {
        onSignedIn(session);
        navigate(returnTo, { replace: true });
      },
      (err: unknown) => setMessage((err as Error).message ?? String(err)),
    );
  }, []);
  return (
    <main class="narrow">
      <h1>Agent control plane</h1>
      {message ? (
        <>
          <p class="state error" role="alert" id="sign-in-error">
            {message}
          </p>
          <p>
            <a href={pageUrl('/')}>Sign in again</a>
          </p>
        </>
      ) : (
        <p class="state loading" role="status" aria-live="polite">
          <span class="spinner" aria-hidden="true" /> Signing in…
        </p>
      )}
    </main>
  );
}
