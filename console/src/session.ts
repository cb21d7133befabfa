// The signed-in person: kept in memory and in sessionStorage (it ends with the tab), never in localStorage.
import { type ApiClient, type components, createApiClient } from '../../client/api.ts';
import { BASE } from './router.ts';

export type User = components['schemas']['User'];
export interface Session {
  token: string;
  user: User;
  /** Epoch milliseconds the token stops being valid. */
  expiresAt: number;
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
    return current;
  } catch {
    sessionStorage.removeItem(KEY);
    return undefined;
  }
}

let apiUrl = location.origin;

/**
 * Where the API is: `api_url` of the settings beside the console's assets (console/build.ts CONSOLE_CONFIG_FILE; the
 * stack writes it, its API being another origin than CloudFront's), else this page's origin (the local server).
 */
export async function locateApi(): Promise<void> {
  try {
    const res = await fetch(`${BASE}/assets/config.json`, { cache: 'no-store' });
    const settings = res.ok ? ((await res.json()) as { api_url?: unknown }) : {};
    if (typeof settings.api_url === 'string') apiUrl = settings.api_url.replace(/\/+$/, '');
  } catch {
    // No settings: the API is this origin.
  }
}

/** The API, as the person signed in (or anonymous). */
export function api(session?: Session): ApiClient {
  return createApiClient(apiUrl, session ? { token: session.token } : {});
}

/** Signs in with a local account; the message of the refusal when it fails. */
export async function signIn(email: string, password: string): Promise<Session | string> {
  const { data, error, response } = await api().POST('/v1/auth/login', { body: { email, password } });
  if (!data) {
    if (error && 'message' in error) return error.message;
    return `Sign-in failed (HTTP ${response.status}).`;
  }
  current = {
    token: data.data.access_token,
    user: data.data.user,
    expiresAt: Date.now() + data.data.expires_in * 1000,
  };
  sessionStorage.setItem(KEY, JSON.stringify(current));
  return current;
}

/** Forgets everything this console kept: memory and the tab's storage. */
export function signOut(): void {
  current = undefined;
  sessionStorage.clear();
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
