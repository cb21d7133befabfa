// The console's sign-in through the configured identity provider: OpenID Connect authorization code with PKCE (S256),
// `state` and `nonce`, as a public client (no secret: anything in the browser is public). These are the steps without
// the page (no location, no storage), so that tests run them in Node; session.ts keeps the pending sign-in in
// sessionStorage and sends the browser on its way. When the IdP gives a refresh token (Cognito always does in this
// flow), session.ts trades it for new tokens before the bearer expires (refreshTokens), so a signed-in admin is not
// sent back to the IdP every hour.

/** What the console learns from its config.json when the API is in auth.provider = "idp" (console/settings.ts). */
export interface IdpSettings {
  /** `https://<auth.idp_domain>/`: the issuer the API verifies. */
  issuer: string;
  client_id: string;
  /** Space-separated scopes (auth.idp_scopes). */
  scope: string;
  /** auth.idp_audience: the `aud` the API requires of the bearer token. */
  audience: string;
}

/** The parts of the IdP's discovery document the console uses. */
export interface ProviderMetadata {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  end_session_endpoint?: string;
}

/** What the console remembers between sending the browser to the IdP and its return to the callback page. */
export interface PendingSignIn {
  state: string;
  nonce: string;
  /** The PKCE code verifier: only its hash (the challenge) leaves the browser before the code exchange. */
  verifier: string;
  redirectUri: string;
  /** The console page to show once signed in (a path below /console/). */
  returnTo: string;
}

/** The token the console sends to the API, and when it stops being valid. */
export interface IdpTokens {
  bearer: string;
  expiresAt: number;
  /** For the IdP's end_session_endpoint (id_token_hint). */
  idToken: string;
  /** For the next refresh, when the IdP gave one (the newest: IdPs that rotate them revoke the one used). */
  refreshToken?: string;
}

/**
 * What a token response must match: a sign-in's nonce (the code exchange), or the tokens of the sign-in being
 * refreshed (a refresh may send no new ID token; one it sends must be the same person's).
 */
export type TokenExpectation = { nonce: string } | { previous: SignedInTokens };

/** What a refresh needs of the sign-in it renews: the ID token (whose person a new one must match) and the refresh token. */
export type SignedInTokens = Pick<IdpTokens, 'idToken' | 'refreshToken'>;

const base64url = (bytes: Uint8Array): string =>
  btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');

/** `bytes` random bytes, base64url: 32 give a PKCE verifier of 43 characters (RFC 7636 wants 43 to 128). */
export function randomToken(bytes = 32): string {
  return base64url(crypto.getRandomValues(new Uint8Array(bytes)));
}

/** The S256 code challenge of a verifier: base64url(SHA-256(verifier)). */
export async function pkceChallenge(verifier: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier));
  return base64url(new Uint8Array(digest));
}

export function newPendingSignIn(redirectUri: string, returnTo: string): PendingSignIn {
  return { state: randomToken(), nonce: randomToken(), verifier: randomToken(), redirectUri, returnTo };
}

/** Issuers compared as the API's verifier writes them and as IdPs do (some without the trailing slash). */
const sameIssuer = (a: string, b: string) => a.replace(/\/+$/, '') === b.replace(/\/+$/, '');

/** Reads `${issuer}.well-known/openid-configuration`; refuses a document of another issuer or without its endpoints. */
export async function discover(issuer: string, fetcher: typeof fetch = fetch): Promise<ProviderMetadata> {
  const url = `${issuer.replace(/\/?$/, '/')}.well-known/openid-configuration`;
  const res = await fetcher(url, { headers: { accept: 'application/json' } });
  if (!res.ok)
    throw new Error(`The identity provider's discovery document (${url}) answered HTTP ${res.status}.`);
  const doc = (await res.json()) as Partial<Record<keyof ProviderMetadata, unknown>>;
  if (typeof doc.issuer !== 'string' || !sameIssuer(doc.issuer, issuer)) {
    throw new Error(`The discovery document at ${url} names another issuer (${String(doc.issuer)}).`);
  }
  for (const key of ['authorization_endpoint', 'token_endpoint'] as const) {
    if (typeof doc[key] !== 'string' || new URL(doc[key]).protocol !== 'https:') {
      throw new Error(`The discovery document at ${url} has no https ${key}.`);
    }
  }
  return {
    issuer: doc.issuer,
    authorization_endpoint: doc.authorization_endpoint as string,
    token_endpoint: doc.token_endpoint as string,
    ...(typeof doc.end_session_endpoint === 'string'
      ? { end_session_endpoint: doc.end_session_endpoint }
      : {}),
  };
}

/** Where the browser goes to sign in. */
export async function authorizationUrl(
  metadata: ProviderMetadata,
  settings: IdpSettings,
  pending: PendingSignIn,
): Promise<string> {
  const url = new URL(metadata.authorization_endpoint);
  const params: Record<string, string> = {
    response_type: 'code',
    client_id: settings.client_id,
    redirect_uri: pending.redirectUri,
    scope: settings.scope,
    state: pending.state,
    nonce: pending.nonce,
    code_challenge: await pkceChallenge(pending.verifier),
    code_challenge_method: 'S256',
  };
  // An API audience other than the client's own (Auth0 and the like): ask for an access token for it.
  if (settings.audience !== settings.client_id) params.audience = settings.audience;
  for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value);
  return url.toString();
}

/**
 * The authorization code of the IdP's answer at the callback page, or why it is refused: the IdP's own error, no
 * sign-in pending in this tab, or a `state` that is not the one this tab sent (a forged or replayed answer).
 */
export function codeFromCallback(query: URLSearchParams, pending: PendingSignIn | undefined): string | Error {
  const error = query.get('error');
  if (error) {
    const description = query.get('error_description');
    return new Error(
      `The identity provider refused the sign-in: ${error}${description ? ` (${description})` : ''}.`,
    );
  }
  if (!pending)
    return new Error('No sign-in was started in this tab (or it was already completed). Sign in again.');
  if (query.get('state') !== pending.state) {
    return new Error('The answer of the identity provider does not belong to this sign-in (state mismatch).');
  }
  const code = query.get('code');
  if (!code) return new Error('The identity provider answered without an authorization code.');
  return code;
}

/** A JWT's payload, unverified: the API verifies the signature; the console only reads its claims. */
export function claimsOf(token: string): Record<string, unknown> | undefined {
  const part = token.split('.')[1];
  if (!part) return undefined;
  try {
    const text = atob(part.replace(/-/g, '+').replace(/_/g, '/'));
    const bytes = Uint8Array.from(text, (c) => c.charCodeAt(0));
    const claims: unknown = JSON.parse(new TextDecoder().decode(bytes));
    return claims && typeof claims === 'object' ? (claims as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

const audiences = (claims: Record<string, unknown>): unknown[] =>
  Array.isArray(claims.aud) ? claims.aud : [claims.aud];

/**
 * The token endpoint's answer checked and the bearer token picked. The ID token must be this sign-in's (its nonce),
 * from the issuer, for this client. The API requires `aud` = auth.idp_audience: the access token when it is a JWT
 * for that audience (an API registered at the IdP, e.g. Auth0's `audience`), else the ID token, whose `aud` is the
 * client ID (Cognito and most IdPs: set auth.idp_audience to the client ID).
 */
export function tokensFromResponse(
  body: Record<string, unknown>,
  metadata: ProviderMetadata,
  settings: IdpSettings,
  expect: TokenExpectation,
): IdpTokens {
  const previous = 'previous' in expect ? expect.previous : undefined;
  const idToken = typeof body.id_token === 'string' ? body.id_token : (previous?.idToken ?? '');
  const id = claimsOf(idToken);
  if (!id) throw new Error('The identity provider sent no ID token (is "openid" among auth.idp_scopes?).');
  if ('nonce' in expect && id.nonce !== expect.nonce) {
    throw new Error('The ID token is not from this sign-in (nonce mismatch).');
  }
  if (previous && id.sub !== claimsOf(previous.idToken)?.sub) {
    throw new Error('The refreshed ID token is for another person than the one signed in.');
  }
  if (typeof id.iss !== 'string' || !sameIssuer(id.iss, metadata.issuer)) {
    throw new Error(`The ID token is from another issuer (${String(id.iss)}).`);
  }
  if (!audiences(id).includes(settings.client_id)) {
    throw new Error('The ID token was issued to another client than auth.idp_client_id.');
  }
  const accessToken = typeof body.access_token === 'string' ? body.access_token : '';
  const access = claimsOf(accessToken);
  const [bearer, claims] =
    access && audiences(access).includes(settings.audience)
      ? [accessToken, access]
      : audiences(id).includes(settings.audience)
        ? [idToken, id]
        : [undefined, undefined];
  if (!bearer || !claims) {
    throw new Error(
      `Neither the access token nor the ID token is for the API's audience (auth.idp_audience = "${settings.audience}").`,
    );
  }
  const exp = typeof claims.exp === 'number' ? claims.exp * 1000 : Date.now() + 5 * 60_000;
  if (exp <= Date.now()) throw new Error('The identity provider sent no unexpired token for the API.');
  const refreshToken = typeof body.refresh_token === 'string' ? body.refresh_token : previous?.refreshToken;
  return { bearer, expiresAt: exp, idToken, ...(refreshToken ? { refreshToken } : {}) };
}

/** A request to the token endpoint (a public client: its ID, no secret); its JSON answer, or why it was refused. */
async function tokenRequest(
  metadata: ProviderMetadata,
  params: Record<string, string>,
  what: string,
  fetcher: typeof fetch,
): Promise<Record<string, unknown>> {
  const res = await fetcher(metadata.token_endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams(params),
  });
  const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  if (!res.ok) {
    const reason = typeof body.error === 'string' ? body.error : `HTTP ${res.status}`;
    throw new Error(`The identity provider refused the ${what} (${reason}).`);
  }
  return body;
}

/** Trades the code for tokens at the token endpoint (the PKCE verifier proves this is the tab that asked). */
export async function exchangeCode(
  code: string,
  metadata: ProviderMetadata,
  settings: IdpSettings,
  pending: PendingSignIn,
  fetcher: typeof fetch = fetch,
): Promise<IdpTokens> {
  const params = {
    grant_type: 'authorization_code',
    code,
    redirect_uri: pending.redirectUri,
    client_id: settings.client_id,
    code_verifier: pending.verifier,
  };
  const body = await tokenRequest(metadata, params, 'code exchange', fetcher);
  return tokensFromResponse(body, metadata, settings, { nonce: pending.nonce });
}

/** Trades the refresh token of `previous` for new tokens (checked as a sign-in's, for the same person). */
export async function refreshTokens(
  previous: SignedInTokens & { refreshToken: string },
  metadata: ProviderMetadata,
  settings: IdpSettings,
  fetcher: typeof fetch = fetch,
): Promise<IdpTokens> {
  const params = {
    grant_type: 'refresh_token',
    refresh_token: previous.refreshToken,
    client_id: settings.client_id,
  };
  const body = await tokenRequest(metadata, params, 'token refresh', fetcher);
  return tokensFromResponse(body, metadata, settings, { previous });
}

/**
 * When to refresh a token valid until `expiresAt`: two minutes before, or halfway for a shorter life, so that a
 * background tab (whose timers the browser delays) still refreshes in time.
 */
export const refreshDelay = (expiresAt: number, now = Date.now()): number =>
  Math.max(0, expiresAt - now - Math.min(120_000, (expiresAt - now) / 2));

/** Where the browser goes to end its session at the IdP too, when the IdP advertises an end_session_endpoint. */
export function endSessionUrl(
  endpoint: string,
  idToken: string,
  clientId: string,
  postLogoutRedirectUri: string,
): string {
  const url = new URL(endpoint);
  url.searchParams.set('id_token_hint', idToken);
  url.searchParams.set('client_id', clientId);
  url.searchParams.set('post_logout_redirect_uri', postLogoutRedirectUri);
  return url.toString();
}
