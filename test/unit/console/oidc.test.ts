// The console's OIDC steps (console/src/oidc.ts) without a browser: the PKCE challenge against RFC 7636's own example,
// the callback's checks (state, the IdP's error, a tab that started nothing), the authorization request, and which
// token the API gets. The whole flow against a real provider is test/e2e/console-idp-browser.test.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  authorizationUrl,
  claimsOf,
  codeFromCallback,
  endSessionUrl,
  type IdpSettings,
  newPendingSignIn,
  type ProviderMetadata,
  pkceChallenge,
  randomToken,
  refreshDelay,
  refreshTokens,
  tokensFromResponse,
} from '#console/src/oidc.ts';

const settings: IdpSettings = {
  issuer: 'https://idp.example.test/',
  client_id: 'console',
  scope: 'openid profile email',
  audience: 'console',
};
const metadata: ProviderMetadata = {
  issuer: 'https://idp.example.test/',
  authorization_endpoint: 'https://idp.example.test/authorize',
  token_endpoint: 'https://idp.example.test/token',
};
const pending = newPendingSignIn('https://console.example.test/console/callback', '/console/summary');

/** An unsigned JWT with these claims: the console only reads claims (the API checks signatures). */
const jwt = (claims: Record<string, unknown>) =>
  `${Buffer.from('{"alg":"RS256"}').toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.sig`;
const idClaims = { iss: metadata.issuer, aud: 'console', nonce: pending.nonce, sub: 's', exp: 2_000_000_000 };

test('the S256 challenge is the one of RFC 7636, appendix B', async () => {
  assert.equal(
    await pkceChallenge('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk'),
    'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
  );
});

test('state, nonce and verifier are 43 base64url characters (256 random bits), never repeated', () => {
  const seen = new Set<string>();
  for (let i = 0; i < 200; i++) {
    const token = randomToken();
    assert.match(token, /^[A-Za-z0-9_-]{43}$/);
    assert.ok(!seen.has(token));
    seen.add(token);
  }
  assert.notEqual(pending.state, pending.nonce);
  assert.notEqual(pending.state, pending.verifier);
});

test('the authorization request: code flow, S256 challenge of the verifier, state, nonce; no verifier, no secret', async () => {
  const url = new URL(await authorizationUrl(metadata, settings, pending));
  assert.equal(url.origin + url.pathname, metadata.authorization_endpoint);
  const q = url.searchParams;
  assert.deepEqual(Object.fromEntries(q), {
    response_type: 'code',
    client_id: 'console',
    redirect_uri: pending.redirectUri,
    scope: 'openid profile email',
    state: pending.state,
    nonce: pending.nonce,
    code_challenge: await pkceChallenge(pending.verifier),
    code_challenge_method: 'S256',
  });
  // An API audience of its own (Auth0 and the like) is asked for.
  const api = new URL(
    await authorizationUrl(metadata, { ...settings, audience: 'https://api.example.test' }, pending),
  );
  assert.equal(api.searchParams.get('audience'), 'https://api.example.test');
});

test('the callback gives the code only for the state this tab sent', () => {
  fc.assert(
    fc.property(fc.string(), fc.string({ minLength: 1 }), (state, code) => {
      const answer = codeFromCallback(new URLSearchParams({ state, code }), pending);
      if (state === pending.state) assert.equal(answer, code);
      else assert.match(String(answer), /state mismatch/);
    }),
  );
  const ok = new URLSearchParams({ state: pending.state, code: 'the-code' });
  assert.equal(codeFromCallback(ok, pending), 'the-code');
  assert.match(String(codeFromCallback(ok, undefined)), /No sign-in was started/);
  assert.match(
    String(codeFromCallback(new URLSearchParams({ state: pending.state }), pending)),
    /without an authorization code/,
  );
  const refused = new URLSearchParams({ error: 'access_denied', state: pending.state, code: 'x' });
  assert.match(String(codeFromCallback(refused, pending)), /refused the sign-in: access_denied/);
});

test('the ID token must be this sign-in’s, from the issuer, for this client', () => {
  const tokens = (claims: Record<string, unknown>) =>
    tokensFromResponse({ id_token: jwt(claims), access_token: 'opaque' }, metadata, settings, pending);
  assert.equal(tokens(idClaims).bearer, jwt(idClaims));
  assert.equal(tokens(idClaims).expiresAt, 2_000_000_000_000);
  assert.throws(() => tokens({ ...idClaims, nonce: 'another' }), /nonce mismatch/);
  assert.throws(() => tokens({ ...idClaims, iss: 'https://evil.example.test/' }), /another issuer/);
  assert.throws(() => tokens({ ...idClaims, aud: 'another-client' }), /another client/);
  // An issuer written without the trailing slash (Cognito) is the same issuer.
  assert.equal(
    tokens({ ...idClaims, iss: 'https://idp.example.test' }).idToken,
    jwt({ ...idClaims, iss: 'https://idp.example.test' }),
  );
  assert.throws(
    () => tokensFromResponse({ access_token: 'opaque' }, metadata, settings, pending),
    /no ID token/,
  );
});

test('the API gets the access token when it is a JWT for auth.idp_audience, else the ID token, else neither', () => {
  const apiSettings = { ...settings, audience: 'https://api.example.test' };
  const access = jwt({ iss: metadata.issuer, aud: ['https://api.example.test', 'x'], exp: 1_900_000_000 });
  const id = jwt(idClaims);
  const picked = tokensFromResponse({ id_token: id, access_token: access }, metadata, apiSettings, pending);
  assert.deepEqual(picked, { bearer: access, expiresAt: 1_900_000_000_000, idToken: id });
  assert.throws(
    () => tokensFromResponse({ id_token: id, access_token: 'opaque' }, metadata, apiSettings, pending),
    /Neither the access token nor the ID token is for the API's audience/,
  );
});

test('a refresh is for the same person; it keeps the ID token and refresh token the IdP does not resend', async () => {
  const signedIn = tokensFromResponse(
    { id_token: jwt(idClaims), refresh_token: 'r1' },
    metadata,
    settings,
    pending,
  );
  assert.equal(signedIn.refreshToken, 'r1');
  const previous = { ...signedIn, refreshToken: 'r1' };
  const sent: URLSearchParams[] = [];
  const answering =
    (body: Record<string, unknown>, status = 200): typeof fetch =>
    async (_url, init) => {
      sent.push(new URLSearchParams(String(init?.body)));
      return new Response(JSON.stringify(body), { status });
    };
  // A new ID token (no nonce in it, as refreshed ones have) and a rotated refresh token.
  const fresh = { ...idClaims, nonce: undefined, exp: 2_000_000_100 };
  const rotated = await refreshTokens(
    previous,
    metadata,
    settings,
    answering({ id_token: jwt(fresh), refresh_token: 'r2' }),
  );
  assert.deepEqual(rotated, {
    bearer: jwt(fresh),
    expiresAt: 2_000_000_100_000,
    idToken: jwt(fresh),
    refreshToken: 'r2',
  });
  assert.deepEqual(Object.fromEntries(sent[0] ?? []), {
    grant_type: 'refresh_token',
    refresh_token: 'r1',
    client_id: 'console',
  });
  // Only an access token for the API: the ID token and refresh token of the sign-in stay.
  const apiSettings = { ...settings, audience: 'https://api.example.test' };
  const access = jwt({ iss: metadata.issuer, aud: 'https://api.example.test', exp: 1_900_000_000 });
  const kept = await refreshTokens(previous, metadata, apiSettings, answering({ access_token: access }));
  assert.deepEqual(kept, {
    bearer: access,
    expiresAt: 1_900_000_000_000,
    idToken: jwt(idClaims),
    refreshToken: 'r1',
  });
  await assert.rejects(
    refreshTokens(previous, metadata, settings, answering({ id_token: jwt({ ...fresh, sub: 'other' }) })),
    /another person/,
  );
  await assert.rejects(
    refreshTokens(previous, metadata, settings, answering({ error: 'invalid_grant' }, 400)),
    /refused the token refresh \(invalid_grant\)/,
  );
  // Nothing new and the old token expired: no token for the API.
  assert.throws(
    () => tokensFromResponse({ id_token: jwt({ ...idClaims, exp: 1 }) }, metadata, settings, pending),
    /no unexpired token/,
  );
});

test('a token is refreshed two minutes before it expires, or halfway through a shorter life', () => {
  const now = 1_000_000;
  assert.equal(refreshDelay(now + 3_600_000, now), 3_480_000);
  assert.equal(refreshDelay(now + 20_000, now), 10_000);
  assert.equal(refreshDelay(now - 5_000, now), 0);
});

test('claims are read from any base64url payload, and nothing from what is not a JWT', () => {
  fc.assert(
    fc.property(fc.dictionary(fc.string(), fc.oneof(fc.string(), fc.integer(), fc.boolean())), (claims) => {
      assert.deepEqual(claimsOf(jwt(claims)), JSON.parse(JSON.stringify(claims)));
    }),
  );
  for (const text of ['', 'abc', 'a.%%%.c', `a.${Buffer.from('"text"').toString('base64url')}.c`]) {
    assert.equal(claimsOf(text), undefined, text);
  }
});

test('sign-out at the IdP names the ID token, the client and where to come back', () => {
  const url = new URL(
    endSessionUrl('https://idp.example.test/logout?x=1', 'id.token', 'console', 'https://c/console/'),
  );
  assert.deepEqual(Object.fromEntries(url.searchParams), {
    x: '1',
    id_token_hint: 'id.token',
    client_id: 'console',
    post_logout_redirect_uri: 'https://c/console/',
  });
});
