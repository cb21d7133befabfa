// The page `dashboard_url`/cli/login that `npm run agent -- login` opens: the person signs in, reads which client asks
// and where its token would go (GET /v1/auth/cli/requests/{id}), and approves (POST /v1/auth/cli/approve) or refuses
// (POST /v1/auth/cli/refuse). Either way the browser goes back to the agent's loopback address: with a one-time code,
// or with error=access_denied, so that the agent stops waiting.
import { useState } from 'preact/hooks';
import type { components } from '../../../client/api.ts';
import { describeError, formatTime, Show, useLoad } from '../load.tsx';
import { api, type Session } from '../session.ts';
import { SignInForm } from './sign-in.tsx';

type CliSignin = components['schemas']['CliSignin'];

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
    <main class="narrow" id="cli-login">
      <h1>Sign in the endpoint agent</h1>
      <p>
        An endpoint agent (such as <code>npm run agent -- login</code>) asks for a token that lets it enroll a
        device in your name. It only receives it at its loopback address (<code>127.0.0.1</code>,{' '}
        <code>[::1]</code> or <code>localhost</code>) on the computer where this browser runs, within 10
        minutes of asking.
        {!session && ' Sign in to see which client asks, and to approve or refuse it.'}
      </p>
      {!session ? (
        <SignInForm onSignedIn={onSignedIn} action="Sign in" />
      ) : (
        <Decision session={session} request={request} />
      )}
    </main>
  );
}

type Outcome = { kind: 'busy' | 'error' | 'refused' | 'approved'; text: string };

function Decision({ session, request }: { session: Session; request: string }) {
  const [outcome, setOutcome] = useState<Outcome>();
  const loaded = useLoad(request, () =>
    api(session).GET('/v1/auth/cli/requests/{id}', { params: { path: { id: request } } }),
  );
  return (
    <Show loaded={loaded} what="the sign-in request">
      {({ data: signin }) => {
        if (outcome?.kind === 'approved' || outcome?.kind === 'refused') {
          return (
            <p class="state" role="status" id="cli-outcome">
              {outcome.text}
            </p>
          );
        }
        const decide = async (action: 'approve' | 'refuse') => {
          setOutcome({ kind: 'busy', text: '' });
          const { data, error, response } = await api(session).POST(`/v1/auth/cli/${action}`, {
            body: { request },
          });
          if (!data) {
            setOutcome({ kind: 'error', text: describeError(error, response.status) });
            return;
          }
          const target = new URL(data.data.redirect_to);
          const where = `${target.hostname}:${target.port || '80'}`;
          // The browser goes only where the page said it would: the agent's loopback address.
          if (
            target.protocol !== 'http:' ||
            !LOOPBACK.has(target.hostname) ||
            where !== signin.loopback_address
          ) {
            setOutcome({
              kind: 'error',
              text: `Refusing to send the browser to ${target.host}: not the agent's loopback address ${signin.loopback_address}.`,
            });
            return;
          }
          setOutcome(
            action === 'approve'
              ? { kind: 'approved', text: `Approved; handing the code to the agent at ${where}…` }
              : {
                  kind: 'refused',
                  text: `Refused: the agent gets no token. Telling the agent at ${where}…`,
                },
          );
          location.assign(target.toString());
        };
        return (
          <div class="card">
            <SigninFacts signin={signin} />
            {signin.status === 'pending' ? (
              <>
                <p>
                  Signed in as <strong>{session.user.email}</strong>. Approve only if you started this sign-in
                  yourself, with this client, on this computer.
                </p>
                <div class="actions">
                  <button
                    type="button"
                    id="approve-cli"
                    disabled={outcome?.kind === 'busy'}
                    onClick={() => decide('approve')}
                  >
                    Approve
                  </button>
                  <button
                    type="button"
                    id="refuse-cli"
                    class="secondary"
                    disabled={outcome?.kind === 'busy'}
                    onClick={() => decide('refuse')}
                  >
                    Refuse
                  </button>
                </div>
              </>
            ) : (
              <p class="state" role="status" id="cli-outcome">
                {signin.status === 'refused'
                  ? 'This sign-in was refused. Run the agent’s login again to ask anew.'
                  : 'This sign-in was approved already; there is nothing more to decide.'}
              </p>
            )}
            {outcome?.kind === 'error' && (
              <p class="state error" role="alert">
                {outcome.text}
              </p>
            )}
          </div>
        );
      }}
    </Show>
  );
}

/** What the person decides on: who asks, where the token would go, when and from where it was asked. */
function SigninFacts({ signin }: { signin: CliSignin }) {
  return (
    <dl class="detail" id="cli-request">
      <dt>Client</dt>
      <dd>
        <code id="cli-client">{signin.client_id}</code> (the name it gives itself)
      </dd>
      <dt>Loopback address</dt>
      <dd>
        <code id="cli-loopback">{signin.loopback_address}</code>
      </dd>
      <dt>Asked</dt>
      <dd>
        <time dateTime={signin.created_at} id="cli-asked">
          {formatTime(signin.created_at)}
        </time>
        , expires{' '}
        <time dateTime={signin.expires_at} id="cli-expires">
          {formatTime(signin.expires_at)}
        </time>
      </dd>
      <dt>Opened from</dt>
      <dd id="cli-from">
        {signin.source_ip ?? 'address not recorded'}
        {signin.user_agent ? `, ${signin.user_agent}` : ''}
      </dd>
    </dl>
  );
}
