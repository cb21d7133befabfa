// The export destinations' lag on the console's Alerts page, in a real headless Chromium, on a frozen clock: one
// destination delivered, two whose receivers refuse connections (building lag, their last error shown; the lake's
// class streams each with their own lag) and one disabled, each row as the admin API gives it. At 390 px and 1440 px: no page wider than the screen, axe-core, the
// table reached by keyboard, and screenshots against their baselines (test/e2e/screenshots/console-export-lag-*;
// UPDATE_SCREENSHOTS=1 rewrites them). Without a destination the page shows no such section.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, mock, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { useAwsKeys } from '#test/support/aws-keys.ts';
import {
  assertAccessibleConsole,
  launchChromium,
  screenshotPage,
  tableCells,
} from '#test/support/browser.ts';
import { enrolledDevice, prepare, send } from '#test/support/device-requests.ts';
import { Receiver } from '#test/support/export-receivers.ts';
import { freePort } from '#test/support/free-port.ts';
import { assertScreenshotMatches } from '#test/support/screenshots.ts';
import { startTestService, TEST_ADMIN, type TestService } from '#test/support/service.ts';

/** When the page is photographed; the events were stored five minutes before. */
const NOW = Date.parse('2026-03-10T12:00:00.000Z');
const STORED = NOW - 5 * 60_000;
type Json = Record<string, unknown>;

let svc: TestService;
let browser: Browser;
let token: string;
const hook = new Receiver();
// A port nothing listens on: the receivers that refuse every batch.
let closed = '';
let restoreKeys = () => {};

const destinations = (closed: string) => [
  { kind: 'webhook', name: 'siem-hook', settings: { url: `${hook.url}/in` }, secret_ref: 'hook-key' },
  { kind: 'splunk_hec', name: 'splunk', settings: { url: closed }, secret_ref: 'hec-token' },
  {
    kind: 'security_lake',
    name: 'lake',
    settings: {
      bucket: 'aws-security-data-lake-eu-west-1-acptest',
      region: 'eu-west-1',
      account_id: '123456789012',
      sources: {
        apiActivity: 'acp_api_activity',
        deviceInventory: 'acp_device_inventory',
        detectionFinding: 'acp_findings',
      },
    },
  },
  { kind: 'otlp_http', name: 'otel', settings: { endpoint: closed }, enabled: false },
];

before(
  async () => {
    // The lake's client signs with these (no credentials are looked up elsewhere); its endpoint refuses anyway.
    restoreKeys = useAwsKeys('TESTKEY', 'TESTSECRET');
    mock.timers.enable({ apis: ['Date'], now: STORED });
    await hook.start();
    const port = await freePort();
    closed = `http://127.0.0.1:${await freePort()}`;
    svc = await startTestService('pglite', {
      port,
      dashboard_url: `http://127.0.0.1:${port}/console`,
      exports: {
        security_lake_endpoint: closed,
        secrets: { 'hook-key': randomBytes(32).toString('base64'), 'hec-token': randomUUID() },
      },
    });
    token = await svc.adminToken();
    browser = await launchChromium();
  },
  { timeout: 120_000 },
);

after(async () => {
  await browser?.close();
  await svc?.dispose();
  await hook.stop();
  mock.timers.reset();
  restoreKeys();
});

async function signedIn(width: number): Promise<Page> {
  const page = await screenshotPage(browser, width, NOW);
  await page.goto(`${svc.url}/console/alerts`);
  await page.fill('#email', TEST_ADMIN.email);
  await page.fill('#password', TEST_ADMIN.password);
  await page.click('#sign-in-button');
  await page.waitForSelector('h1');
  await page.waitForLoadState('networkidle');
  await page.waitForSelector('.state.loading', { state: 'detached' });
  return page;
}

const cells = (page: Page) => tableCells(page, '#export-lag tbody tr');

test('export lag: no section without destinations; then each destination with its kind, cursor, lag and last error, at 390 and 1440 px, by keyboard, accessible', {
  timeout: 240_000,
}, async () => {
  const empty = await signedIn(1440);
  assert.equal(await empty.locator('#exports-title').count(), 0, 'nothing shown without a destination');
  await empty.context().close();

  const device = await enrolledDevice(svc.url, token);
  const events = Array.from({ length: 12 }, (_, i) => ({
    event_id: randomUUID(),
    event_time: new Date(STORED - 60_000 + i).toISOString(),
    agent_type: 'cursor',
    mcp_name: 'jira',
    tool: 'search',
    event_type: 'invocation',
    result: 'allowed',
    duration_ms: 20,
  }));
  const stored = await send(svc.url, prepare('/v1/devices/events', device, { events }));
  assert.equal(stored.status, 200, JSON.stringify(stored.body));
  // An inventory report: the lake's Device Inventory stream lags behind it too.
  const reported = await send(
    svc.url,
    prepare('/v1/devices/inventory', device, {
      agents: [{ agentType: 'cursor', displayName: 'Cursor', mcps: [] }],
    }),
  );
  assert.equal(reported.status, 200, JSON.stringify(reported.body));
  for (const body of destinations(closed)) {
    const res = await svc.call('POST', '/v1/admin/exports/destinations', {
      token,
      body: { ...body, start: 'oldest' },
    });
    assert.equal(res.status, 200, res.text);
  }
  await svc.runSchedule('exportDelivery');
  assert.equal(hook.requests.length, 1, 'the webhook took the batch');
  mock.timers.setTime(NOW);

  const listed = (await svc.call('GET', '/v1/admin/exports/destinations', { token })).body.data as {
    destinations: Array<{ id: string; name: string }>;
  };
  const statuses = new Map<string, Json>();
  for (const d of listed.destinations) {
    const res = await svc.call('GET', `/v1/admin/exports/destinations/${d.id}`, { token });
    statuses.set(d.name, (res.body.data as Json).status as Json);
  }

  for (const width of [390, 1440]) {
    const page = await signedIn(width);
    await page.waitForSelector('#export-lag tbody tr');
    const rows = await cells(page);
    assert.deepEqual(
      rows.map((r) => [r[0], r[1], r[2]]),
      [
        ['lake', 'Security Lake', 'yes'],
        ['otel', 'OTLP/HTTP', 'no not sent'],
        ['siem-hook', 'Webhook', 'yes'],
        ['splunk', 'Splunk HEC', 'yes'],
      ],
    );
    for (const row of rows) {
      const status = statuses.get(row[0] as string) as Json;
      assert.equal(row[3], status.cursor, `${row[0]}: the cursor`);
      assert.equal(
        row[5],
        status.last_error === null ? '—' : String(status.last_error),
        `${row[0]}: the error`,
      );
    }
    const byName = new Map(rows.map((r) => [r[0], r]));
    assert.equal(byName.get('splunk')?.[4], '300 s (5.0 min)12 events');
    assert.equal(byName.get('siem-hook')?.[4], '0 s0 events');
    // The lake's class streams it takes, under its tool calls' lag: the report not delivered, no alert yet.
    assert.deepEqual(await page.locator('tr[data-destination="lake"] .class-lag li').allTextContents(), [
      'Detection findings: 0 s, 0 records',
      'Device inventory: 300 s (5.0 min), 1 record',
    ]);
    assert.equal(await page.locator('tr[data-destination="splunk"] .class-lag').count(), 0);
    assert.equal(byName.get('splunk')?.[5], 'network error');
    assert.match(String(byName.get('lake')?.[5]), /^S3 unreachable/);
    assert.equal(byName.get('siem-hook')?.[6], '10 Mar 2026, 11:55 UTC');
    assert.equal(byName.get('splunk')?.[6], '—');

    const [scrollWidth, innerWidth] = await page.evaluate<[number, number]>(
      '[document.documentElement.scrollWidth, window.innerWidth]',
    );
    assert.ok(scrollWidth <= innerWidth, `the page at ${width} px is ${scrollWidth} px wide`);
    await assertAccessibleConsole(page);
    // By keyboard: the table's scrollable region takes the focus, and shows it.
    let reached = false;
    for (let i = 0; i < 40 && !reached; i++) {
      await page.keyboard.press('Tab');
      reached = await page.evaluate<boolean>(
        "!!document.activeElement?.matches('.table-scroll') && !!document.activeElement.querySelector('#export-lag')",
      );
    }
    assert.ok(reached, `the export table is reached by keyboard at ${width} px`);
    assert.equal(
      await page.evaluate<string>('getComputedStyle(document.activeElement).outlineStyle'),
      'solid',
      'focus is visible',
    );
    await page.locator('#exports-title').scrollIntoViewIfNeeded();
    await page.evaluate('document.activeElement.blur()');
    // The cursor is a transaction id: it differs from run to run.
    await assertScreenshotMatches(page, `console-export-lag-${width}`, { mask: '#export-lag code.cursor' });
    await page.context().close();
  }
});
