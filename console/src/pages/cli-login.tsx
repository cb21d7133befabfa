// The page `dashboard_url`/cli/login that `npm run agent -- login` opens: the person signs in, approves (POST
// /v1/auth/cli/approve) or refuses, and the browser goes back to the agent's loopback address with a one-time code.
import { useState } from 'preact/hooks';
import { describeError } from '../load.tsx';
import { api, type Session } from '../session.ts';
import { SignInForm } from './sign-in.tsx';

const LOOPBACK = new Set(['127.0.0.1', '[::1]', 'localhost']);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function CliLoginPage({
  session,
  onSignedIn,
  request,
}: {
  session: Session | undefined;
  onSignedIn: (s: Session) => void;
  request: string;
}) {
  const [outcome, setOutcome] = useState<{ kind: 'busy' | 'error' | 'refused' | 'approved'; text: string }>();
  document.title = 'Sign in the endpoint agent · Agent control plane';
  if (!UUID.test(request)) {
    return (
      <main class="narrow">
        <h1>Sign in the endpoint agent</h1>
        <p class="state error" role="alert">
          This address has no sign-in request in it. Run <code>npm run agent -- login</code> again and open
          the address it prints.
        </p>
      </main>
    );
  }
  return (
    <main class="narrow">
      <h1>Sign in the endpoint agent</h1>
      <p>
        An endpoint agent on this computer (<code>npm run agent -- login</code>) asks for a token that lets it
        enroll a device in your name. It only receives it at its loopback address (<code>127.0.0.1</code>,{' '}
        <code>[::1]</code> or <code>localhost</code>), within 10 minutes of asking. Sign-in request{' '}
        <code>{request}</code>.
      </p>
      {!session ? (
        <SignInForm onSignedIn={onSignedIn} action="Sign in" />
      ) : outcome?.kind === 'refused' || outcome?.kind === 'approved' ? (
        <p class="state" role="status" id="cli-outcome">
          {outcome.text}
        </p>
      ) : (
        <div class="card">
          <p>
            Signed in as <strong>{session.user.email}</strong>. Approve only if you started this sign-in
            yourself.
          </p>
          <div class="actions">
            <button
              type="button"
              id="approve-cli"
              disabled={outcome?.kind === 'busy'}
              onClick={async () => {
                setOutcome({ kind: 'busy', text: '' });
                const { data, error, response } = await api(session).POST('/v1/auth/cli/approve', {
                  body: { request },
                });
                if (!data) {
                  setOutcome({ kind: 'error', text: describeError(error, response.status) });
                  return;
                }
                const target = new URL(data.data.redirect_to);
                if (target.protocol !== 'http:' || !LOOPBACK.has(target.hostname)) {
                  setOutcome({
                    kind: 'error',
                    text: `Refusing to send the code to ${target.host}: not a loopback address.`,
                  });
                  return;
                }
                setOutcome({
                  kind: 'approved',
                  text: `Approved; handing the code to the agent at ${target.host}…`,
                });
                location.assign(target.toString());
              }}
            >
              Approve
            </button>
            <button
              type="button"
              id="refuse-cli"
              class="secondary"
              onClick={() =>
                setOutcome({
                  kind: 'refused',
                  text: 'Refused: the agent gets no token, and the request expires within 10 minutes. You can close this page.',
                })
              }
            >
              Refuse
            </button>
          </div>
          {outcome?.kind === 'error' && (
            <p class="state error" role="alert">
              {outcome.text}
            </p>
          )}
        </div>
      )}
    </main>
  );
}
