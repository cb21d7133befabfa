// The browser-brokered sign-in end to end, as a person does it on a dashboard of one's own (the API alone, no
// console): the agent CLI runs `login` (no browser opener here, so it prints the URL), a real headless Chromium
// (from npm, driven by playwright-core) opens it, is redirected to a login page that plays the dashboard, signs in,
// reads which client asks and at which loopback address, and approves: it lands on the CLI's loopback redirect, the
// CLI exchanges the code and then `register` enrolls the device with that token. Or it refuses: the CLI stops at once
// with the refusal.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { sql } from 'drizzle-orm';
import type { Browser, Page } from 'playwright-core';
import { queryRows } from '#shared/core/db/query.ts';
import { launchChromium } from '#test/support/browser.ts';
import { assertAgentLoginRefused, runAgentCli, startAgentLogin } from '#test/support/child.ts';
import { startTestService, TEST_ADMIN, type TestService } from '#test/support/service.ts';

// The dashboard's part of the flow: sign the person in, show the pending request (GET /v1/auth/cli/requests/{id}),
// then approve or refuse it and follow redirect_to.
const loginPage = (api: string) => `<!doctype html>
<html><body>
<h1>Dashboard sign-in</h1>
<form id="f"><input id="email" name="email"><input id="password" name="password" type="password">
<button id="go" type="submit">Sign in</button></form>
<p>Client: <span id="client"></span>, loopback address: <span id="loopback"></span></p>
<button id="approve" type="button" hidden>Approve</button> <button id="refuse" type="button" hidden>Refuse</button>
<p id="status"></p>
<script>
const request = new URLSearchParams(location.search).get('request');
let token = '';
const decide = async (action) => {
  const res = await fetch('${api}/v1/auth/cli/' + action, { method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer ' + token }, body: JSON.stringify({ request }) });
  const body = await res.json();
  document.getElementById('status').textContent = res.status + ' ' + JSON.stringify(body);
  if (res.ok) location.href = body.data.redirect_to;
};
document.getElementById('approve').addEventListener('click', () => decide('approve'));
document.getElementById('refuse').addEventListener('click', () => decide('refuse'));
document.getElementById('f').addEventListener('submit', async (e) => {
  e.preventDefault();
  const login = await fetch('${api}/v1/auth/login', { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: document.getElementById('email').value, password: document.getElementById('password').value }) });
  token = (await login.json()).data.access_token;
  const read = await fetch('${api}/v1/auth/cli/requests/' + request, { headers: { authorization: 'Bearer ' + token } });
  const signin = (await read.json()).data;
  document.getElementById('client').textContent = signin.client_id;
  document.getElementById('loopback').textContent = signin.loopback_address;
  document.getElementById('approve').hidden = false;
  document.getElementById('refuse').hidden = false;
});
</script></body></html>`;

let svc: TestService;
let dashboard: Server;
let browser: Browser;

before(
  async () => {
    let api = '';
    dashboard = createServer((req, res) => {
      if (req.url?.startsWith('/cli/login')) {
        res.writeHead(200, { 'content-type': 'text/html' }).end(loginPage(api));
      } else res.writeHead(404).end();
    });
    await new Promise<void>((r) => dashboard.listen(0, '127.0.0.1', r));
    const dashboardUrl = `http://127.0.0.1:${(dashboard.address() as AddressInfo).port}`;
    svc = await startTestService('pglite', {
      dashboard_url: dashboardUrl,
      cors: { allowed_origins: [dashboardUrl] },
    });
    api = svc.url;
    browser = await launchChromium();
  },
  { timeout: 60_000 },
);

after(async () => {
  await browser?.close();
  await svc?.dispose();
  dashboard?.close();
});

/** Opens what the agent printed, signs in on the dashboard, and checks it shows what the agent asked for. */
async function signInAndRead(url: string, asked: { clientId: string; loopback: string }): Promise<Page> {
  const page = await browser.newPage();
  await page.goto(url);
  assert.match(page.url(), /\/cli\/login\?request=/);
  await page.fill('#email', TEST_ADMIN.email);
  await page.fill('#password', TEST_ADMIN.password);
  await page.click('#go');
  await page.waitForSelector('#approve:not([hidden])');
  assert.equal(await page.textContent('#client'), asked.clientId);
  assert.equal(await page.textContent('#loopback'), asked.loopback);
  return page;
}

test('agent login through a real browser, then register with the issued token', {
  timeout: 90_000,
}, async () => {
  const { login, url, state, asked } = await startAgentLogin(svc.url);

  const page = await signInAndRead(url, asked);
  await page.click('#approve');
  await page.waitForURL(/127\.0\.0\.1:\d+\/callback\?code=/);
  assert.match((await page.textContent('body')) ?? '', /Signed in/);

  await login.waitFor(/Signed in; token valid/);
  assert.equal(await login.exited, 0, login.output());

  const register = runAgentCli(['register', '--url', svc.url, '--state', state]);
  const [, deviceId] = await register.waitFor(/Registered: device ([0-9a-f-]{36})/);
  assert.equal(await register.exited, 0, register.output());
  const me = await svc.call('GET', '/v1/me', { token: await svc.adminToken() });
  const [row] = await queryRows(
    svc.runtime.database.db,
    sql`SELECT owner_subject FROM devices WHERE id = ${deviceId as string}::uuid`,
  );
  assert.equal(row?.owner_subject, (me.body.data as { subject: string }).subject);

  const again = runAgentCli(['register', '--url', svc.url, '--state', state]);
  await again.waitFor(/Already registered: device /);
  assert.equal(await again.exited, 0, again.output());
});

test('refused on the dashboard, agent login stops at once with the refusal', {
  timeout: 90_000,
}, async () => {
  const { login, url, state, asked } = await startAgentLogin(svc.url);
  const page = await signInAndRead(url, asked);
  await page.click('#refuse');
  await page.waitForURL(new RegExp(`^http://${asked.loopback}/callback\\?error=access_denied&state=`));
  assert.match((await page.textContent('body')) ?? '', /Sign-in refused/);
  await assertAgentLoginRefused(login, state);
  await page.close();
});
