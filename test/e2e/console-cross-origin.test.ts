// The admin console as deployed: its files on one origin (CloudFront in AWS; here test/support/console-site.ts, the
// build the stack stages, its config.json naming the API, the response headers policy's headers) and the API on
// another (API Gateway; here the local service, whose CORS is shared/core/http/cors.ts, the stack's corsPreflight), with
// cors.allowed_origins naming the console's origin as the stack does. In a real headless Chromium: sign in, the fleet
// and the tool calls show the API's data, every API call went to api_url after a preflight that asked for
// Authorization, a script of the console's origin reads x-request-id of an error, and the browser refused nothing.
// Two controls show the test can fail: the console on an origin the API does not allow, and the console under a
// policy whose connect-src lacks the API, each show the sign-in error in words while the browser logs its refusal.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { assertFleetCountsShown, launchChromium } from '#test/support/browser.ts';
import { simulateFleet } from '#test/support/child.ts';
import {
  assertConsoleAssetDelivery,
  type ConsoleSiteServer,
  deployedConsoleFiles,
  startConsoleSite,
} from '#test/support/console-site.ts';
import { freePort } from '#test/support/free-port.ts';
import { startTestService, TEST_ADMIN, type TestService } from '#test/support/service.ts';
import { consoleSiteHeaders } from '../../infra/constructs/console-site.ts';

const DEVICES = 4;
const EVENTS = 120;

let svc: TestService;
let browser: Browser;
let token: string;
let staging: string;
/** The console as deployed: its origin is in cors.allowed_origins, its CSP names the API. */
let site: ConsoleSiteServer;
/** The same files and headers on an origin cors.allowed_origins does not name. */
let otherOrigin: ConsoleSiteServer;
/** An allowed origin whose CSP does not name the API (connect-src 'self' only). */
let apiNotInCsp: ConsoleSiteServer;

before(
  async () => {
    const [apiPort, sitePort, otherPort, noCspPort] = await Promise.all([
      freePort(),
      freePort(),
      freePort(),
      freePort(),
    ]);
    const allowed = [sitePort, noCspPort].map((port) => `http://127.0.0.1:${port}`);
    // As the stack when the config has no dashboard_url of its own: the console is the dashboard.
    svc = await startTestService('pglite', {
      port: apiPort,
      cors: { allowed_origins: allowed },
      dashboard_url: `http://127.0.0.1:${sitePort}/console`,
    });
    await simulateFleet(svc.url, TEST_ADMIN, { devices: DEVICES, events: EVENTS });
    token = await svc.adminToken();
    const config = svc.runtime.config;
    staging = mkdtempSync(join(tmpdir(), 'acp-console-site-'));
    // As the stack: api_url is the $default stage's URL (with its trailing slash), connect-src names the API's host.
    const root = await deployedConsoleFiles(staging, config, `${svc.url}/`);
    const headers = consoleSiteHeaders([svc.url], config);
    [site, otherOrigin, apiNotInCsp] = await Promise.all([
      startConsoleSite(root, headers, sitePort),
      startConsoleSite(root, headers, otherPort),
      startConsoleSite(root, consoleSiteHeaders([], config), noCspPort),
    ]);
    assert.deepEqual([site.origin, apiNotInCsp.origin], allowed);
    browser = await launchChromium();
  },
  { timeout: 120_000 },
);

after(async () => {
  await browser?.close();
  await Promise.all([site?.close(), otherOrigin?.close(), apiNotInCsp?.close()]);
  await svc?.dispose();
  if (staging) rmSync(staging, { recursive: true, force: true });
});

interface Preflight {
  /** DevTools' id of the request it was sent for. */
  forRequest: string;
  url: string;
  /** Its Access-Control-Request-Headers. */
  requestHeaders: string;
  status?: number;
  allowOrigin?: string;
}

interface Watched {
  page: Page;
  /** Every console message of the page (the browser logs CORS and CSP refusals there). */
  messages: string[];
  /** Requests that failed at the network level (a CORS refusal is one), and uncaught page errors. */
  failures: string[];
  /** Every request the page sent (preflights aside), by DevTools' id, with whether it carried Authorization. */
  requests: Map<string, { method: string; url: string; authorization: boolean }>;
  /** The CORS preflights the browser sent, as DevTools sees them (Playwright's events leave them out). */
  preflights: Map<string, Preflight>;
}

async function watchedPage(): Promise<Watched> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const watched: Watched = { page, messages: [], failures: [], requests: new Map(), preflights: new Map() };
  page.on('console', (message) => watched.messages.push(message.text()));
  page.on('pageerror', (err) => watched.failures.push(`page error: ${err.message}`));
  page.on('requestfailed', (request) =>
    watched.failures.push(`${request.method()} ${request.url()}: ${request.failure()?.errorText}`),
  );
  const cdp = await context.newCDPSession(page);
  const header = (headers: Record<string, string>, name: string) =>
    Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
  cdp.on('Network.requestWillBeSent', ({ requestId, request, initiator }) => {
    if (initiator.type === 'preflight') {
      watched.preflights.set(requestId, {
        forRequest: initiator.requestId ?? '',
        url: request.url,
        requestHeaders: header(request.headers, 'access-control-request-headers') ?? '',
      });
    } else {
      const authorization = header(request.headers, 'authorization') !== undefined;
      watched.requests.set(requestId, { method: request.method, url: request.url, authorization });
    }
  });
  cdp.on('Network.responseReceived', ({ requestId, response }) => {
    const preflight = watched.preflights.get(requestId);
    if (!preflight) return;
    preflight.status = response.status;
    const allowOrigin = header(response.headers, 'access-control-allow-origin');
    if (allowOrigin) preflight.allowOrigin = allowOrigin;
  });
  await cdp.send('Network.enable');
  return watched;
}

/** What the browser said of a refused resource: CORS, CSP. */
const refusals = (watched: Watched) =>
  watched.messages.filter((m) => /CORS|Content Security Policy|Refused to/i.test(m));

async function api<T>(path: string): Promise<T> {
  const res = await svc.call('GET', path, { token });
  assert.equal(res.status, 200, res.text);
  return res.body.data as T;
}

/**
 * Waits for `selector`, or fails at once with the console's error state (a page that could not load says why in
 * words, e.g. "The service is not answering").
 */
async function shown(page: Page, selector: string) {
  await page.waitForSelector(`${selector}, .state.error, #sign-in [role="alert"]:not(:empty)`);
  const errors = await page.locator('.state.error, #sign-in [role="alert"]:not(:empty)').allTextContents();
  assert.deepEqual(errors, [], `waiting for ${selector}`);
}

async function signIn(page: Page, origin: string) {
  // The distribution's / goes to /console/ (its viewer-request function).
  await page.goto(`${origin}/`);
  assert.equal(new URL(page.url()).pathname, '/console/');
  await page.fill('#email', TEST_ADMIN.email);
  await page.fill('#password', TEST_ADMIN.password);
  await page.click('#sign-in-button');
}

test('as deployed, the page is never cached and the hashed assets are compressed and cached for a year', async () => {
  await assertConsoleAssetDelivery(site.origin);
});

test('from its own origin, the console signs in and shows the fleet and the tool calls the API gives', {
  timeout: 60_000,
}, async () => {
  const watched = await watchedPage();
  const { page } = watched;
  await signIn(page, site.origin);

  await shown(page, '#fleet-counts');
  await shown(page, '#devices tbody tr');
  const fleet = await api<{ devices: Record<string, number> }>('/v1/admin/fleet/summary');
  assert.equal(fleet.devices.total, DEVICES);
  await assertFleetCountsShown(page, fleet.devices);

  await page.click('nav a:has-text("Tool calls")');
  const events = await api<{ events: { id: string }[] }>('/v1/admin/observability/events?limit=50');
  assert.equal(events.events.length, 50);
  await shown(page, '#events tbody tr');
  await page.waitForFunction(
    (n) =>
      (
        globalThis as unknown as { document: { querySelectorAll(s: string): { length: number } } }
      ).document.querySelectorAll('#events tbody tr').length === n,
    events.events.length,
  );
  const shownIds = await page
    .locator('#events a.event-link')
    .evaluateAll((links) =>
      links.map((a) => new URL((a as unknown as { href: string }).href).searchParams.get('event')),
    );
  assert.deepEqual(
    shownIds,
    events.events.map((e) => e.id),
  );

  // Every API call went to api_url, none to the console's own origin (whose bucket has no /v1); each was sent
  // after a preflight that asked for its headers (Authorization, once signed in) and that the API allowed.
  const requests = [...watched.requests.entries()];
  const apiCalls = requests.filter(([, r]) => new URL(r.url).pathname.startsWith('/v1/'));
  for (const [, call] of apiCalls) assert.equal(new URL(call.url).origin, svc.url, call.url);
  const preflights = [...watched.preflights.values()];
  const path = (url: string) => new URL(url).pathname;
  const authorized = new Set(apiCalls.filter(([, r]) => r.authorization).map(([, r]) => path(r.url)));
  for (const expected of ['/v1/admin/fleet/summary', '/v1/admin/devices', '/v1/admin/observability/events']) {
    assert.ok(authorized.has(expected), `${expected} was not called with Authorization: ${[...authorized]}`);
  }
  for (const [id, call] of apiCalls) {
    const preflight = preflights.find((p) => p.forRequest === id);
    assert.ok(preflight, `${call.method} ${call.url}: no preflight`);
    assert.match(preflight.requestHeaders, call.authorization ? /authorization/ : /content-type/, call.url);
    assert.equal(preflight.status, 204, call.url);
    assert.equal(preflight.allowOrigin, site.origin, call.url);
  }
  assert.ok(apiCalls.some(([, r]) => r.method === 'POST' && path(r.url) === '/v1/auth/login'));

  // The id of an error, as any script of the console's origin reads it (the API exposes x-request-id).
  const refused = page.waitForResponse((res) => res.url() === `${svc.url}/v1/me`);
  const read = await page.evaluate(async (apiUrl) => {
    const res = await fetch(`${apiUrl}/v1/me`, { headers: { authorization: 'Bearer not-a-token' } });
    return { status: res.status, requestId: res.headers.get('x-request-id') };
  }, svc.url);
  const onTheWire = (await (await refused).allHeaders())['x-request-id'];
  assert.equal(read.status, 401);
  assert.ok(onTheWire, 'the API sends x-request-id');
  assert.equal(read.requestId, onTheWire);

  assert.deepEqual(refusals(watched), []);
  assert.deepEqual(watched.failures, []);
  await page.context().close();
});

/**
 * Signs in on the console at `origin`, which must fail in words as a failed fetch does, storing nothing; returns
 * the page (its context closed) with what the browser logged.
 */
async function signInRefused(origin: string): Promise<Watched & { logged: string }> {
  const watched = await watchedPage();
  const { page } = watched;
  await signIn(page, origin);
  const alert = page.locator('#sign-in [role="alert"]:not(:empty)');
  await alert.waitFor();
  assert.match(
    (await alert.textContent()) ?? '',
    /^The service is not answering\. Check that it is running, then retry\.$/,
  );
  assert.equal(await page.evaluate<number>('sessionStorage.length'), 0);
  await page.context().close();
  return { ...watched, logged: refusals(watched).join('\n') };
}

test('control: from an origin cors.allowed_origins does not name, sign-in fails in words and the browser logs CORS', {
  timeout: 30_000,
}, async () => {
  const refused = await signInRefused(otherOrigin.origin);
  assert.ok(
    refused.logged.includes(`from origin '${otherOrigin.origin}' has been blocked by CORS policy`),
    `no CORS refusal logged: ${refused.messages.join('\n')}`,
  );
  assert.ok(
    refused.failures.some((f) => f.startsWith(`POST ${svc.url}/v1/auth/login`)),
    refused.failures.join('\n'),
  );
});

test('control: under a policy whose connect-src lacks the API, sign-in fails in words and the browser logs CSP', {
  timeout: 30_000,
}, async () => {
  const refused = await signInRefused(apiNotInCsp.origin);
  assert.ok(
    refused.logged.includes(
      `Connecting to '${svc.url}/v1/auth/login' violates the following Content Security Policy directive: "connect-src 'self'"`,
    ),
    `no CSP refusal logged: ${refused.messages.join('\n')}`,
  );
  assert.equal(refused.preflights.size, 0, 'the browser never asked the API');
});
