// The admin console signing in through the identity provider (auth.provider = "idp"), in a real headless Chromium
// from npm, against a real OpenID provider (panva's oidc-provider over HTTPS, test/support/oidc-provider.ts): the
// authorization code flow with PKCE through the provider's own login and consent pages, the admin pages on the
// provider's token (admin by its roles claim), the agent CLI's sign-in approved by a person signed in that way, a
// forged or foreign answer at the callback refused, and sign-out ending the console's and the provider's session with
// nothing left in sessionStorage or localStorage.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { consoleCsp } from '#console/build.ts';
import { assertAccessibleConsole, assertCliSigninShown, launchChromium } from '#test/support/browser.ts';
import { finishAgentLoginAndRegister, startAgentLogin } from '#test/support/child.ts';
import { freePort } from '#test/support/free-port.ts';
import { startOidcProvider, type TestOidcProvider } from '#test/support/oidc-provider.ts';
import { startTestService, TEST_JWT_SECRET, type TestService } from '#test/support/service.ts';

const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/console-idp/', import.meta.url));
const CLIENT_ID = 'acp-console';

let svc: TestService;
let idp: TestOidcProvider;
let idpOrigin: string;
let browser: Browser;
/** Messages of the console's pages that report a refused resource (CSP) or an uncaught error. */
const browserProblems: string[] = [];

before(
  async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const port = await freePort();
    const consoleUrl = `http://127.0.0.1:${port}/console`;
    idp = await startOidcProvider({ port: await freePort(), clientId: CLIENT_ID, consoleUrl });
    idpOrigin = new URL(idp.issuer).origin;
    svc = await startTestService('pglite', {
      port,
      dashboard_url: consoleUrl,
      auth: {
        provider: 'idp',
        idp_domain: idp.domain,
        // The console sends the ID token, whose audience is its client ID (console/src/oidc.ts).
        idp_audience: CLIENT_ID,
        idp_client_id: CLIENT_ID,
        idp_scopes: 'openid profile email roles',
        // Signs the CLI sign-in's tokens (dashboard_url is set).
        jwt_secret: TEST_JWT_SECRET,
      },
    });
    browser = await launchChromium();
  },
  { timeout: 120_000 },
);

after(async () => {
  await browser?.close();
  await svc?.dispose();
  await idp?.stop();
});

async function newPage(): Promise<Page> {
  // The provider's certificate is self-signed: the browser is told to accept it (tests only).
  const context = await browser.newContext({
    viewport: { width: 1280, height: 900 },
    ignoreHTTPSErrors: true,
  });
  const page = await context.newPage();
  page.on('console', (message) => {
    const onConsole = page.url().startsWith(svc.url);
    if (onConsole && /Content Security Policy|Refused to/i.test(message.text()))
      browserProblems.push(message.text());
  });
  page.on('pageerror', (err) => {
    if (page.url().startsWith(svc.url)) browserProblems.push(`page error: ${err.message}`);
  });
  return page;
}

const onIdp = (url: URL) => url.origin === idpOrigin;
const onConsole = (url: URL) => url.origin === new URL(svc.url).origin;

/** On the provider's own pages: its login form (any password), then its consent page when it asks. */
async function signInAtProvider(page: Page, login: string): Promise<void> {
  await page.waitForURL(onIdp);
  await page.fill('input[name="login"]', login);
  await page.fill('input[name="password"]', 'any password');
  await page.click('button[type="submit"]');
  const consent = page.locator('input[name="prompt"][value="consent"]');
  await Promise.race([page.waitForURL(onConsole), consent.waitFor({ state: 'attached' })]);
  if (onIdp(new URL(page.url()))) await page.click('button[type="submit"]');
  await page.waitForURL(onConsole);
}

const storage = (page: Page) =>
  page.evaluate<{ session: number; local: number }>(
    '({ session: sessionStorage.length, local: localStorage.length })',
  );

const sessionToken = async (page: Page) =>
  page.evaluate<string>(`JSON.parse(sessionStorage.getItem('acp.console.session')).token`);

test("the console's settings name the provider, and its policy lets it call the provider's origin", async () => {
  const settings = await fetch(`${svc.url}/console/assets/config.json`);
  assert.deepEqual(await settings.json(), {
    idp: {
      issuer: idp.issuer,
      client_id: CLIENT_ID,
      scope: 'openid profile email roles',
      audience: CLIENT_ID,
    },
  });
  const page = await fetch(`${svc.url}/console/`);
  const csp = page.headers.get('content-security-policy') ?? '';
  assert.equal(csp, consoleCsp([idpOrigin]));
  assert.match(csp, new RegExp(`connect-src 'self' ${idpOrigin.replace(/[.]/g, '\\.')}(;|$)`));
  assert.equal(settings.headers.get('content-security-policy'), csp);
});

test('the agent CLI is signed in by a person who signs in to the console through the provider', {
  timeout: 90_000,
}, async () => {
  const { login, url, state, asked } = await startAgentLogin(svc.url);
  const page = await newPage();
  await page.goto(url);
  const approvalPage = page.url();
  assert.match(approvalPage, /\/console\/cli\/login\?request=[0-9a-f-]{36}$/);
  await page.click('#idp-sign-in');
  await signInAtProvider(page, 'alice-admin');
  // Back on the approval page it started from, signed in.
  await page.waitForSelector('#approve-cli');
  assert.equal(page.url(), approvalPage);
  assert.match((await page.textContent('#cli-login, main')) ?? '', /alice-admin@idp\.example\.test/);
  // Read with the provider's token: what the agent asked for.
  await assertCliSigninShown(page, asked);
  await page.click('#approve-cli');
  await page.waitForURL(/127\.0\.0\.1:\d+\/callback\?/);
  await finishAgentLoginAndRegister(login, svc.url, state);
  await page.context().close();
  assert.deepEqual(browserProblems, []);
});

test("sign in through the provider's pages, admin pages show the API's data, sign out ends both sessions", {
  timeout: 90_000,
}, async () => {
  const page = await newPage();
  await page.goto(`${svc.url}/console/`);
  await page.waitForSelector('#idp-sign-in');
  await assertAccessibleConsole(page, join(ARTIFACTS, '1-sign-in.png'));
  assert.deepEqual(await storage(page), { session: 0, local: 0 });
  const authorizeRequest = page.waitForRequest((req) => req.url().startsWith(`${idp.issuer}auth?`));
  await page.click('#idp-sign-in');
  // The authorization request: code flow, PKCE S256, state and nonce, this console's callback, no secret.
  const authorize = new URL((await authorizeRequest).url()).searchParams;
  assert.equal(authorize.get('response_type'), 'code');
  assert.equal(authorize.get('client_id'), CLIENT_ID);
  assert.equal(authorize.get('redirect_uri'), `${svc.url}/console/callback`);
  assert.equal(authorize.get('code_challenge_method'), 'S256');
  assert.match(authorize.get('code_challenge') ?? '', /^[A-Za-z0-9_-]{43}$/);
  assert.match(authorize.get('state') ?? '', /^[A-Za-z0-9_-]{43}$/);
  assert.match(authorize.get('nonce') ?? '', /^[A-Za-z0-9_-]{43}$/);
  assert.equal(authorize.get('client_secret'), null);
  await signInAtProvider(page, 'alice-admin');

  // Fleet: the device the CLI enrolled, as the API counts it for the provider's token.
  await page.waitForSelector('#fleet-counts');
  await page.waitForURL(`${svc.url}/console/`);
  const token = await sessionToken(page);
  const fleet = await svc.call('GET', '/v1/admin/fleet/summary', { token });
  assert.equal(fleet.status, 200, fleet.text);
  const devices = (fleet.body.data as { devices: Record<string, number> }).devices;
  assert.ok((devices.total ?? 0) >= 1, 'the device the CLI test registered');
  for (const key of ['total', 'online', 'never_reported']) {
    const shown = await page.textContent(`#fleet-counts [data-count="${key}"]`);
    assert.equal(Number(shown?.replace(/,/g, '')), devices[key], key);
  }
  await page.waitForSelector('#devices tbody tr');
  assert.equal(await page.locator('#devices tbody tr').count(), devices.total);
  const me = await svc.call('GET', '/v1/me', { token });
  assert.deepEqual(me.body.data, {
    subject: 'alice-admin',
    email: 'alice-admin@idp.example.test',
    name: 'Alice Admin',
    roles: ['admin'],
    token_use: 'session',
  });
  assert.match((await page.textContent('.who')) ?? '', /alice-admin@idp\.example\.test/);
  assert.deepEqual(await storage(page), { session: 1, local: 0 });
  await assertAccessibleConsole(page, join(ARTIFACTS, '2-fleet.png'));

  // Another admin page: the audit log, read with the same token.
  await page.click('nav a[href="/console/audit-log"]');
  await page.waitForSelector('#audit-logs tbody tr');

  // Sign out: the console forgets everything, and the provider's session ends too (its end_session_endpoint).
  await page.click('#sign-out');
  await page.waitForURL(onIdp);
  await page.click('button[name="logout"][value="yes"]');
  await page.waitForURL(`${svc.url}/console/`);
  await page.waitForSelector('#idp-sign-in');
  assert.deepEqual(await storage(page), { session: 0, local: 0 });
  // Signing in again asks for the login again: the provider's session is gone.
  await page.click('#idp-sign-in');
  await page.waitForURL(onIdp);
  await page.waitForSelector('input[name="login"]');
  await page.context().close();
  assert.deepEqual(browserProblems, []);
});

test('a person without the admin role signs in but the admin pages say they need it', {
  timeout: 60_000,
}, async () => {
  const page = await newPage();
  await page.goto(`${svc.url}/console/`);
  await page.click('#idp-sign-in');
  await signInAtProvider(page, 'bob-user');
  await page.waitForSelector('.who');
  assert.match((await page.textContent('.who')) ?? '', /bob-user@idp\.example\.test/);
  const denied = await svc.call('GET', '/v1/admin/fleet/summary', { token: await sessionToken(page) });
  assert.equal(denied.status, 403);
  await page.locator('main [role="alert"]').first().waitFor();
  await page.context().close();
  assert.deepEqual(browserProblems, []);
});

test("an answer at the callback that is not this tab's sign-in is refused, and nothing is kept", {
  timeout: 60_000,
}, async () => {
  const page = await newPage();
  // No sign-in started in this tab.
  await page.goto(`${svc.url}/console/callback?code=stolen&state=guessed`);
  await page.waitForSelector('#sign-in-error');
  assert.match((await page.textContent('#sign-in-error')) ?? '', /No sign-in was started/);
  assert.deepEqual(await storage(page), { session: 0, local: 0 });
  // A sign-in started, and an answer with another state comes back.
  await page.goto(`${svc.url}/console/`);
  await page.click('#idp-sign-in');
  await page.waitForURL(onIdp);
  await page.goto(`${svc.url}/console/callback?code=stolen&state=guessed`);
  await page.waitForSelector('#sign-in-error');
  assert.match((await page.textContent('#sign-in-error')) ?? '', /state mismatch/);
  assert.deepEqual(await storage(page), { session: 0, local: 0 });
  // The provider's own refusal is shown in words.
  await page.goto(`${svc.url}/console/callback?error=access_denied&error_description=nope&state=x`);
  await page.waitForSelector('#sign-in-error');
  assert.match(
    (await page.textContent('#sign-in-error')) ?? '',
    /refused the sign-in: access_denied \(nope\)/,
  );
  await page.context().close();
  assert.deepEqual(browserProblems, []);
});

test('a session signed in through the provider is renewed with its refresh token before the token expires', {
  timeout: 90_000,
}, async () => {
  const TTL = 20;
  idp.setTokenTtl(TTL);
  try {
    const page = await newPage();
    await page.goto(`${svc.url}/console/summary`);
    await page.click('#idp-sign-in');
    await signInAtProvider(page, 'alice-admin');
    await page.waitForSelector('.who');
    const first = await page.evaluate<{ token: string; expiresAt: number; refresh: boolean }>(
      `(() => { const s = JSON.parse(sessionStorage.getItem('acp.console.session'));
        return { token: s.token, expiresAt: s.expiresAt, refresh: typeof s.idp.refreshToken === 'string' }; })()`,
    );
    assert.equal(first.refresh, true, 'the provider gave a refresh token, kept with the session');
    assert.ok(first.expiresAt - Date.now() <= TTL * 1000, 'the short-lived token of this test');
    // Past the first token's expiry: the API refuses it, and the console holds a newer one it takes.
    await new Promise((resolve) => setTimeout(resolve, first.expiresAt - Date.now() + 2_000));
    assert.equal((await svc.call('GET', '/v1/me', { token: first.token })).status, 401);
    const renewed = await sessionToken(page);
    assert.notEqual(renewed, first.token);
    const me = await svc.call('GET', '/v1/me', { token: renewed });
    assert.equal(me.status, 200, me.text);
    assert.equal((me.body.data as { subject: string }).subject, 'alice-admin');
    // The pages already open go on with it: another page loads, no sign-in form, no "session ended".
    await page.click('nav a[href="/console/audit-log"]');
    await page.waitForSelector('#audit-logs tbody tr');
    assert.equal(await page.locator('#session-notice').count(), 0);
    assert.deepEqual(await storage(page), { session: 1, local: 0 });
    await page.context().close();
    assert.deepEqual(browserProblems, []);
  } finally {
    idp.setTokenTtl(3600);
  }
});
