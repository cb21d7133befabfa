// The API reference page (GET /v1/docs) in a real browser: Redoc, served by the service itself, renders the OpenAPI
// document's operations under the page's strict Content-Security-Policy, and nothing is refused or loaded elsewhere.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { routeList } from '#shared/routes.ts';
import { launchChromium } from '#test/support/browser.ts';
import { startTestService, type TestService } from '#test/support/service.ts';

let svc: TestService;
let browser: Browser;

before(
  async () => {
    svc = await startTestService('pglite');
    browser = await launchChromium();
  },
  { timeout: 60_000 },
);

after(async () => {
  await browser?.close();
  await svc?.dispose();
});

test('GET /v1/docs renders every operation of the document, under a strict CSP', {
  timeout: 60_000,
}, async () => {
  const page = await browser.newPage();
  const refused: string[] = [];
  const elsewhere: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy|Refused to/i.test(message.text())) refused.push(message.text());
  });
  // What the browser fetched from anywhere but this service (a request the policy refuses is never finished).
  page.on('requestfinished', (request) => {
    if (!request.url().startsWith(svc.url) && !/^(data|blob):/.test(request.url())) {
      elsewhere.push(request.url());
    }
  });
  const response = await page.goto(`${svc.url}/v1/docs`);
  assert.equal(response?.status(), 200);
  const csp = response?.headers()['content-security-policy'] ?? '';
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /script-src 'self'(;|$)/);
  assert.doesNotMatch(csp, /unsafe-eval/);

  // Redoc lists each operation by its summary in the side menu.
  await page.waitForFunction(
    `document.querySelector('.menu-content')?.textContent?.includes('Register a device')`,
    undefined,
    { timeout: 30_000 },
  );
  const menu = (await page.textContent('.menu-content')) ?? '';
  const summaries = [...new Set(routeList.map(([, route]) => route.summary.slice(0, 30)))];
  const missing = summaries.filter((summary) => !menu.includes(summary));
  assert.deepEqual(missing, [], 'operations the reference does not show');
  // Redoc's menu footer links its logo from its CDN; the policy refuses it (the image hides itself on error). That
  // is the one thing refused, and nothing at all is loaded from elsewhere.
  assert.deepEqual(
    refused.filter((message) => !message.includes("'https://cdn.redoc.ly/redoc/logo-mini.svg'")),
    [],
  );
  assert.deepEqual(elsewhere, []);
});
