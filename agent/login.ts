// Browser sign-in of the agent (RFC 8252 + PKCE S256): a loopback listener, the browser to /v1/auth/cli/authorize,
// the code back on the loopback redirect, exchanged with the verifier for a device-enrollment token.
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { endpoint, ServiceUnreachable, serviceFetch } from './service-address.ts';

export interface LoginResult {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
}

/**
 * What this agent calls itself at authorize (RFC 6749 section 4.1.1 `client_id`): the service shows it to the person
 * who approves or refuses the sign-in.
 */
export const CLIENT_ID = 'acp-agent-cli';

export interface LoginOptions {
  baseUrl: string;
  /** The client_id sent at authorize (default CLIENT_ID). */
  clientId?: string;
  /** Opens the URL in a browser; returns false when it could not. The URL is printed either way. */
  openBrowser?: (url: string) => Promise<boolean>;
  print?: (line: string) => void;
  timeoutMs?: number;
}

/**
 * Opens the URL with the program named by the BROWSER environment variable when it is set (the convention of git,
 * gh and Python's webbrowser: a path or a command name, given the URL as its one argument), else with the
 * platform's opener (xdg-open, open, start); false when none can run here.
 */
export function openInSystemBrowser(url: string, browser = process.env.BROWSER): Promise<boolean> {
  const [command, args] = browser
    ? [browser, [url]]
    : process.platform === 'darwin'
      ? ['open', [url]]
      : process.platform === 'win32'
        ? ['cmd', ['/c', 'start', '', url]]
        : ['xdg-open', [url]];
  return new Promise((resolve) => {
    try {
      const child = spawn(command, args, { stdio: 'ignore', detached: true });
      child.once('error', () => resolve(false));
      child.once('spawn', () => {
        child.unref();
        resolve(true);
      });
    } catch {
      resolve(false);
    }
  });
}

/** An error_description for a terminal line: printable ASCII only (RFC 6749 section 4.1.2.1), bounded. */
const errorDescription = (text: string | null) =>
  text ? ` (${text.replace(/[^\x20-\x7e]/g, '?').slice(0, 200)})` : '';

const PAGE = (title: string, text: string) =>
  `<!doctype html><meta charset="utf-8"><title>${title}</title><body style="font-family:sans-serif;margin:3rem"><h1>${title}</h1><p>${text}</p></body>`;

/** Fails fast, with the reason, when the service cannot be reached or has CLI sign-in disabled. */
async function checkSigninEnabled(baseUrl: string): Promise<void> {
  let health: { cli_signin?: string } | undefined;
  const res = await serviceFetch(baseUrl)(endpoint(baseUrl, '/v1/healthcheck'));
  try {
    health = (await res.json()) as { cli_signin?: string };
  } catch {
    throw new ServiceUnreachable(
      baseUrl,
      'not_the_service',
      `the service at ${baseUrl} answered /v1/healthcheck with HTTP ${res.status}, not the API's JSON: is that the API's address (not the console's)? use --url`,
    );
  }
  if (health?.cli_signin === 'disabled') {
    throw new Error(
      `CLI sign-in is disabled on ${baseUrl}: the service has no dashboard URL (start it with --dashboard-url or ` +
        'SVC_DASHBOARD_URL). Without it no new device can register.',
    );
  }
}

export async function login(options: LoginOptions): Promise<LoginResult> {
  const print = options.print ?? ((line: string) => process.stdout.write(`${line}\n`));
  await checkSigninEnabled(options.baseUrl);
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const state = randomBytes(16).toString('base64url');

  let settle: { resolve: (code: string) => void; reject: (err: Error) => void } | undefined;
  const codePromise = new Promise<string>((resolve, reject) => {
    settle = { resolve, reject };
  });
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== '/callback') {
      res.writeHead(404).end();
      return;
    }
    const code = url.searchParams.get('code');
    const error = url.searchParams.get('error');
    if (url.searchParams.get('state') === state && error) {
      // RFC 6749 section 4.1.2.1: the authorization server (here, the person on the dashboard) said no.
      const refused = error === 'access_denied';
      const reason = refused
        ? 'sign-in refused in the browser'
        : `sign-in failed in the browser: ${error}${errorDescription(url.searchParams.get('error_description'))}`;
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end(
          PAGE(
            refused ? 'Sign-in refused' : 'Sign-in failed',
            refused
              ? 'The sign-in was refused; the agent got no token. You can close this tab.'
              : 'The sign-in did not complete. Run login again.',
          ),
        );
      settle?.reject(new Error(reason));
      return;
    }
    if (url.searchParams.get('state') !== state || !code) {
      res
        .writeHead(400, { 'content-type': 'text/html' })
        .end(PAGE('Sign-in failed', 'The response did not match this sign-in. Run login again.'));
      settle?.reject(new Error('state mismatch or missing code on the loopback redirect'));
      return;
    }
    res
      .writeHead(200, { 'content-type': 'text/html' })
      .end(PAGE('Signed in', 'You can close this tab and return to the terminal.'));
    settle?.resolve(code);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const redirectUri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`;
  const authorize = new URL(endpoint(options.baseUrl, '/v1/auth/cli/authorize'));
  authorize.search = new URLSearchParams({
    client_id: options.clientId ?? CLIENT_ID,
    redirect_uri: redirectUri,
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  }).toString();

  // Printed before trying the browser and whatever comes of it: an opener that "succeeds" may still show
  // nothing (no display, a browser on another machine), and the person can always copy the URL.
  print(`Sign in at this URL (open it in a browser if none opens):\n  ${authorize}`);
  const opened = await (options.openBrowser ?? openInSystemBrowser)(authorize.toString());
  print(opened ? 'Opened the browser. Waiting for the sign-in…' : 'Waiting for the sign-in…');
  const timer = setTimeout(
    () => settle?.reject(new Error('sign-in timed out; run login again')),
    options.timeoutMs ?? 10 * 60_000,
  );
  try {
    const code = await codePromise;
    const res = await serviceFetch(options.baseUrl)(endpoint(options.baseUrl, '/v1/auth/cli/token'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ code, code_verifier: verifier, redirect_uri: redirectUri }),
    });
    const body = (await res.json()) as LoginResult & { error?: string; message?: string };
    if (!res.ok) throw new Error(`token exchange failed: ${res.status} ${body.error}: ${body.message}`);
    return body;
  } finally {
    clearTimeout(timer);
    server.close();
    server.closeAllConnections();
  }
}
