// The admin console: Fleet, Tool calls, Summary, and the agent CLI's sign-in approval. It talks only to the public
// API, through the typed client generated from the OpenAPI document (client/api.ts).
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { AlertsPage } from './pages/alerts.tsx';
import { AuditLogPage } from './pages/audit-log.tsx';
import { CatalogPage } from './pages/catalog.tsx';
import { CliLoginPage } from './pages/cli-login.tsx';
import { DevicePage } from './pages/device.tsx';
import { FleetPage } from './pages/fleet.tsx';
import { IdpCallbackPage } from './pages/idp-callback.tsx';
import { PolicyPage } from './pages/policy.tsx';
import { RequestsPage } from './pages/requests.tsx';
import { SignInForm } from './pages/sign-in.tsx';
import { SummaryPage } from './pages/summary.tsx';
import { ToolCallsPage } from './pages/tool-calls.tsx';
import { navigate, pageUrl, useLocation } from './router.ts';
import { locateApi, onSessionEnded, readSession, type Session, signOut } from './session.ts';

const PAGES = [
  { path: '/', title: 'Fleet' },
  { path: '/tool-calls', title: 'Tool calls' },
  { path: '/summary', title: 'Summary' },
  { path: '/requests', title: 'Requests' },
  { path: '/catalog', title: 'Catalog' },
  { path: '/policy', title: 'Policy' },
  { path: '/alerts', title: 'Alerts' },
  { path: '/audit-log', title: 'Audit log' },
] as const;

function App() {
  const { path, query } = useLocation();
  const [session, setSession] = useState<Session | undefined>(readSession());
  const [notice, setNotice] = useState('');
  const [menuOpen, setMenuOpen] = useState(false);
  useEffect(
    () =>
      onSessionEnded(() => {
        setSession(undefined);
        setNotice('Signed out: your session ended (the token expired or was refused). Sign in again.');
      }),
    [],
  );
  const signedIn = (s: Session) => {
    setNotice('');
    setSession(s);
  };
  if (path === '/callback') return <IdpCallbackPage query={query} onSignedIn={signedIn} />;
  if (path === '/cli/login') {
    return <CliLoginPage session={session} onSignedIn={signedIn} request={query.get('request') ?? ''} />;
  }
  const devicePath = /^\/devices\/([^/]+)$/.exec(path);
  const page =
    PAGES.find((p) => p.path === path) ?? (devicePath ? { path: '/', title: 'Device' } : undefined);
  document.title = `${page?.title ?? 'Not found'} · Agent control plane`;
  if (!session) {
    return (
      <main class="narrow">
        <h1>Agent control plane</h1>
        {notice && (
          <p class="state" role="status" id="session-notice">
            {notice}
          </p>
        )}
        <SignInForm onSignedIn={signedIn} action="Sign in" />
      </main>
    );
  }
  return (
    <>
      <header class="top">
        <nav aria-label="Console">
          <span class="brand">Agent control plane</span>
          {/* On a phone the pages fold behind this button; on a wider screen it is not shown. */}
          <button
            type="button"
            class="menu"
            id="menu-button"
            aria-expanded={menuOpen}
            aria-controls="console-pages"
            onClick={() => setMenuOpen(!menuOpen)}
          >
            Menu
          </button>
          <div id="console-pages" class={menuOpen ? 'pages open' : 'pages'}>
            {PAGES.map((p) => (
              <a
                key={p.path}
                href={pageUrl(p.path)}
                aria-current={p.path === (devicePath ? '/' : path) ? 'page' : undefined}
                onClick={(e) => {
                  e.preventDefault();
                  setMenuOpen(false);
                  navigate(pageUrl(p.path));
                }}
              >
                {p.title}
              </a>
            ))}
          </div>
        </nav>
        <span class="who">
          {session.user.email}{' '}
          <button
            type="button"
            id="sign-out"
            onClick={() => {
              const endSession = signOut();
              setSession(undefined);
              if (endSession) location.assign(endSession);
              else navigate(pageUrl('/'), { replace: true });
            }}
          >
            Sign out
          </button>
        </span>
      </header>
      <main>
        {path === '/' && <FleetPage session={session} query={query} />}
        {devicePath && <DevicePage session={session} id={decodeURIComponent(devicePath[1] as string)} />}
        {path === '/tool-calls' && <ToolCallsPage session={session} query={query} />}
        {path === '/summary' && <SummaryPage session={session} query={query} />}
        {path === '/requests' && <RequestsPage session={session} query={query} />}
        {path === '/catalog' && <CatalogPage session={session} query={query} />}
        {path === '/policy' && <PolicyPage session={session} />}
        {path === '/alerts' && <AlertsPage session={session} query={query} />}
        {path === '/audit-log' && <AuditLogPage session={session} query={query} />}
        {!page && (
          <>
            <h1>Not found</h1>
            <p class="state empty">The console has no page at this address.</p>
          </>
        )}
      </main>
    </>
  );
}

const root = document.getElementById('app');
if (root) {
  await locateApi();
  root.textContent = '';
  render(<App />, root);
}
