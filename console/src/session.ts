// The signed-in person: kept in memory and in sessionStorage (it ends with the tab), never in localStorage. Signed in
// with a local account (POST /v1/auth/login) or, when the API is in auth.provider = "idp", through the identity
// provider (oidc.ts), whose token the API takes as it is. An IdP session with a refresh token is renewed before its
// token expires (scheduleRefresh); every API call reads the newest token, so pages need not know.
import { type ApiClient, type components, createApiClient } from '../../client/api.ts';
import {
  authorizationUrl,
  codeFromCallback,
  discover,
  endSessionUrl,
  exchangeCode,
  type IdpSettings,
  newPendingSignIn,
  type PendingSignIn,
  refreshDelay,
  refreshTokens,
} from './oidc.ts';
import { BASE } from './router.ts';

export type User = components['schemas']['User'];
export interface Session {
  token: string;
  user: Pick<User, 'email' | 'name' | 'roles'>;
  /** Epoch milliseconds the token stops being valid. */
  expiresAt: number;
  /** Signed in through the identity provider: what its sign-out and the next refresh need. */
  idp?: { idToken: string; endSession?: string; refreshToken?: string };
}

const KEY = 'acp.console.session';
let current: Session | undefined;

export function readSession(): Session | undefined {
  if (current && current.expiresAt > Date.now()) return current;
  const stored = sessionStorage.getItem(KEY);
  if (!stored) return undefined;
  try {
    const parsed = JSON.parse(stored) as Session;
    if (typeof parsed.token !== 'string' || parsed.expiresAt <= Date.now()) {
      sessionStorage.removeItem(KEY);
      return undefined;
    }
    current = parsed;
    scheduleRefresh(current);
    return current;
  } catch {
    sessionStorage.removeItem(KEY);
    return undefined;
  }
}

let apiUrl = location.origin;
let idp: IdpSettings | undefined;

/** The identity provider the console signs in through (config.json's `idp`), or none: local accounts. */
export const idpSettings = (): IdpSettings | undefined => idp;

function readIdpSettings(value: unknown): IdpSettings | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const v = value as Record<string, unknown>;
  const keys = ['issuer', 'client_id', 'scope', 'audience'] as const;
  return keys.every((key) => typeof v[key] === 'string') ? (v as unknown as IdpSettings) : undefined;
}

/**
 * Where the API is: `api_url` of the settings beside the console's assets (console/build.ts CONSOLE_CONFIG_FILE; the
 * stack writes it, its API being another origin than CloudFront's), else this page's origin (the local server).
 */
export async function locateApi(): Promise<void> {
  try {
    const res = await fetch(`${BASE}/assets/config.json`, { cache: 'no-store' });
    const settings = res.ok ? ((await res.json()) as { api_url?: unknown; idp?: unknown }) : {};
    if (typeof settings.api_url === 'string') apiUrl = settings.api_url.replace(/\/+$/, '');
    idp = readIdpSettings(settings.idp);
  } catch {
    // No settings: the API is this origin.
  }
}

/** The API, as the person signed in (or anonymous): each call sends the newest token of that sign-in. */
export function api(session?: Session): ApiClient {
  return createApiClient(apiUrl, session ? { token: () => current?.token ?? session.token } : {});
}

/** Signs in with a local account; the message of the refusal when it fails. */
export async function signIn(email: string, password: string): Promise<Session | string> {
  const { data, error, response } = await api().POST('/v1/auth/login', { body: { email, password } });
  if (!data) {
    if (error && 'message' in error) return error.message;
    return `Sign-in failed (HTTP ${response.status}).`;
  }
  return keep({
    token: data.data.access_token,
    user: data.data.user,
    expiresAt: Date.now() + data.data.expires_in * 1000,
  });
}

function keep(session: Session): Session {
  current = session;
  sessionStorage.setItem(KEY, JSON.stringify(current));
  scheduleRefresh(current);
  return current;
}

let refreshTimer: ReturnType<typeof setTimeout> | undefined;

/**
 * Renews an IdP session before its token expires (oidc.ts refreshDelay), when the IdP gave a refresh token. A failed
 * refresh is tried again in 15 s while the token lasts; after that the API's 401 ends the session as before.
 */
function scheduleRefresh(session: Session): void {
  clearTimeout(refreshTimer);
  const refreshToken = session.idp?.refreshToken;
  if (!refreshToken) return;
  refreshTimer = setTimeout(async () => {
    if (current !== session || !idp) return;
    try {
      const metadata = await discover(idp.issuer);
      const tokens = await refreshTokens(
        { idToken: session.idp?.idToken ?? '', refreshToken },
        metadata,
        idp,
      );
      if (current !== session) return;
      keep({
        ...session,
        token: tokens.bearer,
        expiresAt: tokens.expiresAt,
        idp: {
          ...session.idp,
          idToken: tokens.idToken,
          ...(tokens.refreshToken ? { refreshToken: tokens.refreshToken } : {}),
        },
      });
    } catch {
      if (current === session && session.expiresAt - Date.now() > 15_000) {
        refreshTimer = setTimeout(() => scheduleRefresh(session), 15_000);
      }
    }
  }, refreshDelay(session.expiresAt));
}

const PENDING_KEY = 'acp.console.idp-pending';
const CALLBACK_PATH = `${BASE}/callback`;

/** Sends the browser to the identity provider; it comes back to /console/callback, then to `returnTo`. */
export async function startIdpSignIn(settings: IdpSettings, returnTo: string): Promise<void> {
  const metadata = await discover(settings.issuer);
  const pending = newPendingSignIn(`${location.origin}${CALLBACK_PATH}`, returnTo);
  sessionStorage.setItem(PENDING_KEY, JSON.stringify(pending));
  location.assign(await authorizationUrl(metadata, settings, pending));
}

/** A console page to return to: a path below /console/ of this origin, else the first page. */
const consolePage = (path: unknown): string =>
  typeof path === 'string' && path.startsWith(`${BASE}/`) && !path.startsWith(CALLBACK_PATH)
    ? path
    : `${BASE}/`;

/**
 * At /console/callback: checks the IdP's answer against the sign-in this tab started (used once), trades the code,
 * and asks the API who that is (GET /v1/me), which also proves the API takes the token.
 */
export async function completeIdpSignIn(
  settings: IdpSettings,
  query: URLSearchParams,
): Promise<{ session: Session; returnTo: string }> {
  const stored = sessionStorage.getItem(PENDING_KEY);
  sessionStorage.removeItem(PENDING_KEY);
  let pending: PendingSignIn | undefined;
  try {
    pending = stored ? (JSON.parse(stored) as PendingSignIn) : undefined;
  } catch {
    pending = undefined;
  }
  const code = codeFromCallback(query, pending);
  if (code instanceof Error) throw code;
  const signIn = pending as PendingSignIn;
  const metadata = await discover(settings.issuer);
  const tokens = await exchangeCode(code, metadata, settings, signIn);
  const { data, error, response } = await createApiClient(apiUrl, { token: tokens.bearer }).GET('/v1/me');
  if (!data) {
    const reason = error && 'message' in error ? error.message : `HTTP ${response.status}`;
    throw new Error(`The service did not accept the identity provider's token: ${reason}`);
  }
  const { email, name, roles } = data.data;
  const session = keep({
    token: tokens.bearer,
    user: { email: email || data.data.subject, name, roles },
    expiresAt: tokens.expiresAt,
    idp: {
      idToken: tokens.idToken,
      ...(metadata.end_session_endpoint ? { endSession: metadata.end_session_endpoint } : {}),
      ...(tokens.refreshToken ? { refreshToken: tokens.refreshToken } : {}),
    },
  });
  return { session, returnTo: consolePage(signIn.returnTo) };
}

/**
 * Forgets everything this console kept: memory and the tab's storage. Signed in through an IdP that advertises an
 * end_session_endpoint: the address that ends the IdP's session too, for the caller to go to.
 */
export function signOut(): string | undefined {
  const ended = current ?? readSession();
  current = undefined;
  clearTimeout(refreshTimer);
  sessionStorage.clear();
  if (!ended?.idp?.endSession || !idp) return undefined;
  return endSessionUrl(ended.idp.endSession, ended.idp.idToken, idp.client_id, `${location.origin}${BASE}/`);
}

const endedListeners = new Set<() => void>();

/** Called when the API refuses the token (expired, or signed by a rotated secret): sign out, tell the app. */
export function sessionEnded(): void {
  signOut();
  for (const listener of endedListeners) listener();
}

export function onSessionEnded(listener: () => void): () => void {
  endedListeners.add(listener);
  return () => endedListeners.delete(listener);
}
