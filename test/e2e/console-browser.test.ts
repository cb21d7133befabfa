// The admin console (console/, served by the local server under /console/) in a real headless Chromium from npm:
// sign in; a section's loading state while its answer is held back; the fleet's numbers, devices, agents and MCP
// servers (their "new" marks, the ones never called) against the API's; the denied events, paged by keyset, one of
// them opened, a shared filtered link opened in a new context; an error event opened; the summary; sign out. A
// data-access request denied with a reason, another's scope and usage shown, approved and revoked with a reason (and
// their audit records), and the agent CLI's sign-in approved on the console's page, and another refused (the page
// shows the client and loopback address the agent sent; the refused agent exits at once). What a page shows is
// compared with what the API answers to the same query. The retention notice is shown exactly when the API gives
// archived_before, naming its cutoff and archive location, before and after a service with an archive drops a day.
// Every page is checked with axe-core (no serious or critical violation) and photographed into test-artifacts/console/
// (not compared; every page at a phone's and a desktop's width, compared with baselines: console-screenshots.test.ts). The console's strict Content-Security-Policy is checked on the wire, and in the browser: no page
// may log a CSP refusal.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import type { Browser, Page } from 'playwright-core';
import { CONSOLE_CSP } from '#console/build.ts';
import { rebuildFleetStats } from '#shared/observability/fleet/stats.ts';
import { seedDemoDatasource } from '#shared/requests/environments/demo.ts';
import {
  assertAccessibleConsole,
  assertCliSigninShown,
  assertFleetCountsShown,
  launchChromium,
} from '#test/support/browser.ts';
import {
  assertAgentLoginRefused,
  finishAgentLoginAndRegister,
  simulateFleet,
  startAgentLogin,
} from '#test/support/child.ts';
import { assertConsoleAssetDelivery } from '#test/support/console-site.ts';
import { freePort } from '#test/support/free-port.ts';
import { demoJoinedScope, demoOrdersRequest } from '#test/support/request-fixtures.ts';
import { startTestService, TEST_ADMIN, type TestService } from '#test/support/service.ts';

const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/console/', import.meta.url));
const DEVICES = 6;
const EVENTS = 600;

const DAY = 86_400_000;
let svc: TestService;
let browser: Browser;
let token: string;
/** Messages of the browser that report a refused resource (CSP) or an uncaught error, on any page. */
const browserProblems: string[] = [];

before(
  async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const port = await freePort();
    svc = await startTestService('pglite', { port, dashboard_url: `http://127.0.0.1:${port}/console` });
    await simulateFleet(svc.url, TEST_ADMIN, { devices: DEVICES, events: EVENTS });
    token = await svc.adminToken();
    const db = svc.runtime.database.db;
    await seedDemoDatasource(db);
    // A device, an agent type and an MCP server first seen a month ago: the fleet's tables then have rows on both
    // sides of the "new in the last 7 days" mark.
    await db.execute(sql`UPDATE devices SET created_at = now() - interval '30 days'
      WHERE id = (SELECT id FROM devices ORDER BY serial_number LIMIT 1)`);
    await db.execute(sql`UPDATE inventory_agents SET first_seen_at = now() - interval '30 days'
      WHERE agent_type = (SELECT min(agent_type) FROM inventory_agents)`);
    await db.execute(sql`UPDATE inventory_mcps SET first_seen_at = now() - interval '30 days'
      WHERE name = (SELECT min(name) FROM inventory_mcps)`);
    await rebuildFleetStats(db);
    browser = await launchChromium();
  },
  { timeout: 120_000 },
);

after(async () => {
  await browser?.close();
  await svc?.dispose();
});

async function newPage(viewport = { width: 1280, height: 900 }): Promise<Page> {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  page.on('console', (message) => {
    if (/Content Security Policy|Refused to/i.test(message.text())) browserProblems.push(message.text());
  });
  page.on('pageerror', (err) => browserProblems.push(`page error: ${err.message}`));
  return page;
}

/** assertAccessibleConsole, its photograph in test-artifacts/console/. */
const assertAccessible = (page: Page, name: string) =>
  assertAccessibleConsole(page, join(ARTIFACTS, `${name}.png`));

async function api<T>(path: string): Promise<T> {
  const res = await svc.call('GET', path, { token });
  assert.equal(res.status, 200, res.text);
  return res.body.data as T;
}

/**
 * Waits until the event table shows `n` rows (each with `result` when given). A page's URL changes before its rows
 * arrive, and the previous page's rows, then the loading state, are shown until then.
 */
async function waitForEventRows(page: Page, n: number, result = '') {
  await page.waitForFunction(
    ([count, prefix]) => {
      // Runs in the page (a function, not a string: the console's CSP has no 'unsafe-eval').
      type Cell = { textContent: string | null };
      const { document } = globalThis as unknown as {
        document: { querySelectorAll(s: string): ArrayLike<Cell> };
      };
      const cells = Array.from(document.querySelectorAll('#events tbody tr td:nth-child(2)'));
      const rows = document.querySelectorAll('#events tbody tr').length;
      return rows === count && cells.every((td) => (td.textContent ?? '').startsWith(prefix));
    },
    [n, result] as const,
  );
}

/** The ids of the events the table shows, in order (each row's link carries its event's id). Runs in the page. */
const eventIdsOnPage = () => {
  type Link = { getAttribute(name: string): string | null };
  const { document } = globalThis as unknown as {
    document: { querySelectorAll(s: string): ArrayLike<Link> };
  };
  return Array.from(document.querySelectorAll('#events tbody tr a.event-link'), (a) =>
    new URLSearchParams((a.getAttribute('href') ?? '').split('?')[1]).get('event'),
  );
};

/** Waits until the event table shows exactly the events `ids`, in that order (the API's page), else fails. */
async function waitForEventIds(page: Page, ids: string[]) {
  let shown: (string | null)[] = [];
  for (const until = Date.now() + 15_000; Date.now() < until; await sleep(100)) {
    shown = await page.evaluate(eventIdsOnPage);
    if (shown.length === ids.length && shown.every((id, i) => id === ids[i])) return;
  }
  assert.deepEqual(shown, ids, "the rows shown are the API's page");
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A table row of the fleet page: its first cell's own text (a name, without badges), its badges, its other cells. */
interface FleetRow {
  name: string;
  badges: (string | null)[];
  cells: string[];
}

/** The rows of the table `selector`. Runs in the page. */
const fleetRowsOnPage = (selector: string): FleetRow[] => {
  type Node = { nodeType: number; textContent: string | null };
  type El = Node & {
    childNodes: ArrayLike<Node>;
    querySelectorAll(s: string): ArrayLike<El>;
    querySelector(s: string): El | null;
    getAttribute(name: string): string | null;
  };
  const { document } = globalThis as unknown as { document: El };
  return Array.from(document.querySelectorAll(`${selector} tbody tr`), (tr) => {
    const [first, ...rest] = Array.from(tr.querySelectorAll('td'));
    return {
      // The name, as text or as a link, without its badges.
      name: Array.from(first?.childNodes ?? [], (n) =>
        n.nodeType === 3 || (n.nodeType === 1 && (n as El).getAttribute('data-badge') === null)
          ? (n.textContent ?? '')
          : '',
      )
        .join('')
        .trim(),
      badges: Array.from(first?.querySelectorAll('[data-badge]') ?? [], (b) => b.getAttribute('data-badge')),
      // A relative time ("3 days ago") is read by its exact time, the one shown on hover.
      cells: rest.map((td) => td.querySelector('time')?.getAttribute('title') ?? td.textContent ?? ''),
    };
  });
};

/** A number as the console writes it (formatNumber in console/src/load.tsx). */
const shownCount = (n: number) => new Intl.NumberFormat('en-US').format(n);

/** A number as the console writes it (grouped with commas), read back. */
const shownNumber = (text: string | null | undefined) => Number((text ?? '').replace(/,/g, ''));

/** Whether the API's time is within the 7 days before now: what the fleet marks `new`. */
const newByApi = (iso: string) => Date.now() - Date.parse(iso) < 7 * DAY;

/** What a read of events says of the retention window (archived_before, archive_location). */
interface Retention {
  archived_before?: string;
  archive_location?: string | null;
}

/** The console's way of writing a time (formatTime in console/src/load.tsx). */
const consoleTime = (iso: string) =>
  `${new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' }).format(new Date(iso))} UTC`;

/**
 * The retention notice `selector` is shown exactly when the API's answer carries archived_before, and then names the
 * cutoff and the archive's location as the API gives them (or says that no archive is configured). Call it once the
 * answer is on the page (its rows or its empty state): the notice is drawn with them.
 */
async function assertRetentionNotice(page: Page, selector: string, read: Retention): Promise<string> {
  const notice = page.locator(selector);
  if (!read.archived_before) {
    assert.equal(await notice.count(), 0, `${selector}: no notice when the API gives no archived_before`);
    return '';
  }
  await notice.waitFor();
  const text = (await notice.textContent()) ?? '';
  assert.equal(await notice.locator('time').getAttribute('datetime'), read.archived_before);
  assert.equal(await notice.locator('time').textContent(), consoleTime(read.archived_before));
  assert.match(text, /past the event retention window/);
  if (read.archive_location) {
    assert.equal(await notice.locator('code.archive-location').textContent(), read.archive_location);
    assert.ok(text.includes(`in the archive at ${read.archive_location} (`), text);
    assert.doesNotMatch(text, /no archive/i);
  } else {
    assert.equal(read.archive_location, null);
    assert.equal(await notice.locator('code').count(), 0);
    assert.match(text, /No archive is configured, so retention deletes them\.$/);
  }
  return text;
}

async function signIn(page: Page, url: string) {
  await page.goto(url);
  await page.fill('#email', TEST_ADMIN.email);
  await page.fill('#password', TEST_ADMIN.password);
  await page.click('#sign-in-button');
}

test('the console is served under /console/ with a strict Content-Security-Policy and no inline script', async () => {
  assert.doesNotMatch(CONSOLE_CSP, /unsafe-inline|unsafe-eval|\*/);
  assert.match(CONSOLE_CSP, /script-src 'self'/);
  for (const path of ['/console/', '/console/tool-calls?result=denied', '/console/cli/login?request=x']) {
    const res = await fetch(`${svc.url}${path}`);
    assert.equal(res.status, 200, path);
    assert.equal(res.headers.get('content-security-policy'), CONSOLE_CSP, path);
    assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
    const html = await res.text();
    assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, `${path}: an inline script`);
    assert.doesNotMatch(html, /\sstyle=|<style/, `${path}: an inline style`);
  }
  const scriptName = /"\/console\/assets\/(console-[A-Z0-9]+\.js)"/.exec(
    await (await fetch(`${svc.url}/console/`)).text(),
  )?.[1];
  const script = await fetch(`${svc.url}/console/assets/${scriptName}`);
  assert.equal(script.status, 200);
  assert.match(script.headers.get('content-type') ?? '', /^text\/javascript/);
  assert.equal(script.headers.get('content-security-policy'), CONSOLE_CSP);
  // The console's settings: none locally (the API is this origin); the stack writes {"api_url": …} there.
  const settings = await fetch(`${svc.url}/console/assets/config.json`);
  assert.equal(settings.status, 200);
  assert.deepEqual(await settings.json(), {});
  const missing = await fetch(`${svc.url}/console/assets/nothing.js`);
  assert.equal(missing.status, 404);
  await assertConsoleAssetDelivery(svc.url);
  const bare = await fetch(`${svc.url}/console`, { redirect: 'manual' });
  assert.equal(bare.status, 308);
  assert.equal(bare.headers.get('location'), '/console/');
});

test('sign in, fleet counts match the API, denied events filtered and one opened, summary, sign out', {
  timeout: 120_000,
}, async () => {
  const page = await newPage();
  await page.goto(`${svc.url}/console/`);
  await page.waitForSelector('#sign-in');
  await assertAccessible(page, '1-sign-in');
  await page.fill('#email', TEST_ADMIN.email);
  await page.fill('#password', 'not the password');
  await page.click('#sign-in-button');
  await page.waitForSelector('#sign-in [role="alert"]:not(:empty)');
  assert.equal(await page.evaluate<number>('sessionStorage.length'), 0);
  // The agents' answer is held back: while it is on its way, their section shows the loading state.
  let releaseAgents = () => {};
  const agentsHeld = new Promise<void>((resolve) => {
    releaseAgents = resolve;
  });
  const isAgents = (url: URL) => url.pathname === '/v1/admin/agents';
  await page.route(isAgents, async (route) => {
    await agentsHeld;
    await route.continue();
  });
  const agentsAsked = page.waitForRequest((req) => isAgents(new URL(req.url())));
  await page.fill('#password', TEST_ADMIN.password);
  await page.click('#sign-in-button');

  // Fleet: the numbers are the API's.
  await page.waitForSelector('#fleet-counts');
  await page.waitForSelector('#devices tbody tr');
  await agentsAsked;
  // The agents have a tab of their own; their answer is held, so the tab shows them loading.
  await page.click('#tab-agents');
  await page.waitForURL(/\/console\/\?tab=agents$/);
  const agentsSection = page.locator('section[aria-labelledby="agents-title"]');
  const agentsLoading = agentsSection.getByRole('status');
  assert.equal(await agentsLoading.count(), 1, 'the agents are loading');
  assert.ok(await agentsLoading.isVisible());
  assert.equal(await agentsLoading.locator('.spinner').count(), 1);
  assert.equal(await page.locator('#agents').count(), 0, 'no agents before their answer');
  releaseAgents();
  await page.waitForSelector('#agents tbody tr');
  assert.equal(await agentsLoading.count(), 0, 'the loading state is gone once the agents are shown');
  await page.unroute(isAgents);
  await page.click('#tab-devices');
  await page.waitForSelector('#devices tbody tr');

  const fleet = await api<{ devices: Record<string, number> }>('/v1/admin/fleet/summary');
  assert.equal(fleet.devices.total, DEVICES);
  await assertFleetCountsShown(page, fleet.devices);
  // The devices as the API lists them for the page's query, each marked new exactly when it enrolled within 7 days.
  const devices = await api<{
    devices: {
      serial_number: string;
      created_at: string;
      last_seen_at: string;
      agent_version: string | null;
    }[];
  }>('/v1/admin/devices?limit=100&sort=-last_seen');
  assert.equal(devices.devices.length, DEVICES);
  const deviceRows = await page.evaluate(fleetRowsOnPage, '#devices');
  assert.deepEqual(
    deviceRows.map((r) => [r.name, r.badges, r.cells[2], r.cells.at(-1)]),
    devices.devices.map((d) => [
      d.serial_number,
      newByApi(d.created_at) ? ['new'] : [],
      consoleTime(d.last_seen_at),
      d.agent_version ?? '—',
    ]),
  );
  assert.ok(
    devices.devices.every((d) => d.agent_version),
    'the simulated agents report their version',
  );
  assert.ok(
    devices.devices.some((d) => newByApi(d.created_at)) &&
      devices.devices.some((d) => !newByApi(d.created_at)),
    'devices on both sides of the 7-day mark',
  );
  // The agents: each row the API's, new exactly when first seen within 7 days.
  type Usage = { calls: number; denied: number; first_seen_at: string; last_seen_at: string };
  const agents = await api<{
    agents: ({ agent_type: string; devices: number; mcps: { distinct: number } } & Usage)[];
  }>('/v1/admin/agents?limit=100');
  await page.click('#tab-agents');
  const agentRows = await page.evaluate(fleetRowsOnPage, '#agents');
  assert.deepEqual(
    agentRows.map((r) => [r.name, r.badges, ...r.cells.slice(0, 4).map(shownNumber), ...r.cells.slice(4)]),
    agents.agents.map((a) => [
      a.agent_type,
      newByApi(a.first_seen_at) ? ['new'] : [],
      a.devices,
      a.mcps.distinct,
      a.calls,
      a.denied,
      consoleTime(a.first_seen_at),
      consoleTime(a.last_seen_at),
    ]),
  );
  assert.ok(
    agents.agents.some((a) => newByApi(a.first_seen_at)) &&
      agents.agents.some((a) => !newByApi(a.first_seen_at)),
    'agents on both sides of the 7-day mark',
  );
  // The MCP servers: each row the API's, marked new and never called as the API says; the shadow ones and the
  // configured-but-never-called ones listed on their own.
  const mcps = await api<{
    mcps: ({
      name: string;
      devices: number;
      transports: string[];
      usage: string;
      sources: { type: string; name: string; version?: string }[];
    } & Usage)[];
    shadow: { name: string }[];
    configured_never_called: { name: string; devices: number }[];
  }>('/v1/admin/mcps?limit=100');
  await page.click('#tab-mcps');
  await page.waitForSelector('#mcps tbody tr');
  const mcpRows = await page.evaluate(fleetRowsOnPage, '#mcps');
  assert.deepEqual(
    mcpRows.map((r) => [
      r.name,
      r.badges,
      shownNumber(r.cells[0]),
      r.cells[1],
      ...r.cells.slice(2, 4).map(shownNumber),
      ...r.cells.slice(4),
    ]),
    mcps.mcps.map((m) => [
      m.name,
      [
        ...(newByApi(m.first_seen_at) ? ['new'] : []),
        ...(m.usage === 'configured_never_called' ? ['never-called'] : []),
      ],
      m.devices,
      m.transports.join(', '),
      m.calls,
      m.denied,
      consoleTime(m.first_seen_at),
      consoleTime(m.last_seen_at),
      m.sources.length === 0
        ? '—'
        : m.sources
            .map(
              (x) => `${x.type} ${x.name}${x.version ? `${x.type === 'oci' ? ':' : '@'}${x.version}` : ''}`,
            )
            .join(', '),
    ]),
  );
  assert.ok(
    mcps.mcps.some((m) => m.sources.length > 1),
    'a name with two sources (the simulator gives Windsurf another github build)',
  );
  assert.ok(
    mcps.mcps.some((m) => newByApi(m.first_seen_at)) && mcps.mcps.some((m) => !newByApi(m.first_seen_at)),
    'MCP servers on both sides of the 7-day mark',
  );
  for (const s of mcps.shadow)
    assert.match((await page.textContent('#shadow-mcps')) ?? '', new RegExp(s.name));
  assert.ok(mcps.configured_never_called.length > 0, 'the simulator configures an MCP server it never calls');
  const neverCalled = await page.locator('#never-called-mcps li').allTextContents();
  assert.deepEqual(
    neverCalled.map((text) => {
      const [, name, devices] = /^(.+) \(([\d,]+) devices\)$/.exec(text) ?? [];
      return [name, shownNumber(devices)];
    }),
    mcps.configured_never_called.map((m) => [m.name, m.devices]),
  );
  assert.equal(await page.evaluate<number>('localStorage.length'), 0, 'nothing in localStorage');
  assert.equal(await page.evaluate<number>('sessionStorage.length'), 1, 'the session in sessionStorage');
  await assertAccessible(page, '2-fleet');

  // Tool calls: the denied ones, filtered in the form; the filter lands in the URL.
  await page.click('nav a:has-text("Tool calls")');
  await waitForEventRows(page, 50);
  // The first page of all events has a next page: its range does not reach the retention window, and no notice.
  const firstPage = await api<Retention & { next_cursor: string | null }>(
    '/v1/admin/observability/events?limit=50',
  );
  assert.ok(firstPage.next_cursor);
  assert.equal(firstPage.archived_before, undefined);
  await assertRetentionNotice(page, '#events-retention', firstPage);
  await page.selectOption('#filter-result', 'denied');
  await page.click('#apply-filters');
  await page.waitForURL(/\/console\/tool-calls\?result=denied$/);
  type EventPage = { events: { id: string; agent_type: string }[]; next_cursor: string | null } & Retention;
  const denied = await api<EventPage>('/v1/admin/observability/events?result=denied&limit=50');
  assert.ok(denied.events.length > 0, 'the simulator made denied events');
  // The URL changes before the filtered page arrives: wait for its rows (the unfiltered ones, then the loading
  // state, come first), then check them.
  await waitForEventRows(page, denied.events.length, 'denied');
  await waitForEventIds(
    page,
    denied.events.map((e) => e.id),
  );
  const rows = page.locator('#events tbody tr');
  for (const text of await rows.locator('td:nth-child(2)').allTextContents()) assert.match(text, /^denied/);
  // A notice exactly when the API gives archived_before (a list without `from` gives it on its last page).
  await assertRetentionNotice(page, '#events-retention', denied);

  // Keyset paging: the next page is the API's page after the first for the same filters, and back again.
  assert.ok(denied.next_cursor, 'more denied events than a page');
  const deniedNext = await api<EventPage>(
    `/v1/admin/observability/events?result=denied&limit=50&cursor=${encodeURIComponent(denied.next_cursor)}`,
  );
  assert.ok(deniedNext.events.length > 0);
  await page.click('#next-page');
  await page.waitForURL(/\/console\/tool-calls\?result=denied&cursor=[^&]+$/);
  await waitForEventIds(
    page,
    deniedNext.events.map((e) => e.id),
  );
  assert.equal(await page.locator('#next-page').count(), deniedNext.next_cursor ? 1 : 0);
  await assertRetentionNotice(page, '#events-retention', deniedNext);
  await page.click('#first-page');
  await page.waitForURL(/\/console\/tool-calls\?result=denied$/);
  await waitForEventIds(
    page,
    denied.events.map((e) => e.id),
  );

  // A denied event opened: its deny code, reason and rule are the API's.
  const first = denied.events[0] as EventPage['events'][number];
  await rows.first().locator('a.event-link').click();
  await page.waitForURL(new RegExp(`result=denied&event=${first.id}$`));
  await page.waitForSelector('#detail-deny-code');
  type EventDetail = {
    deny_code: string | null;
    deny_reason: string | null;
    rule_applied: string | null;
    error_message: string | null;
  };
  const deniedEvent = await api<EventDetail>(`/v1/admin/observability/events/${first.id}`);
  assert.ok(
    deniedEvent.deny_code && deniedEvent.deny_reason && deniedEvent.rule_applied,
    'the simulator says why',
  );
  assert.deepEqual(
    [
      await page.textContent('#detail-deny-code'),
      await page.textContent('#detail-deny-reason'),
      await page.textContent('#detail-rule'),
    ],
    [deniedEvent.deny_code, deniedEvent.deny_reason, deniedEvent.rule_applied],
  );
  await assertAccessible(page, '3-tool-calls-denied');

  // The event's session: its totals are the API's, and the list is its events.
  const sessionId = await page.textContent('#detail-session');
  assert.ok(sessionId, 'the simulator gives events a session');
  await page.click('#detail-session');
  await page.waitForURL(new RegExp(`/console/tool-calls\\?session_id=${sessionId}$`));
  await page.waitForSelector('#session-totals');
  const sessionView = await api<{ session: { calls: number } } & Retention>(
    `/v1/admin/observability/sessions/${sessionId}?limit=1`,
  );
  assert.match(
    (await page.textContent('#session-totals')) ?? '',
    new RegExp(`^${sessionView.session.calls} calls`),
  );
  await waitForEventRows(page, Math.min(50, sessionView.session.calls));
  assert.equal(await page.locator('#events tbody tr').count(), Math.min(50, sessionView.session.calls));
  // Retention has dropped nothing: the session says nothing of it.
  assert.equal(sessionView.archived_before, undefined);
  await assertRetentionNotice(page, '#session-retention', sessionView);
  const sessionEvents = await api<Retention & { next_cursor: string | null }>(
    `/v1/admin/observability/events?session_id=${sessionId}&limit=50`,
  );
  assert.equal(sessionEvents.archived_before, undefined, 'retention has dropped nothing yet');
  await assertRetentionNotice(page, '#events-retention', sessionEvents);
  await assertAccessible(page, '3b-session');

  // A shared link shows the same page: a filtered view opened in a new browser context asks to sign in, then lands
  // on that view, its rows the API's for those filters.
  const sharedQuery = `result=denied&agent_type=${encodeURIComponent(first.agent_type)}`;
  const sharedLink = `${svc.url}/console/tool-calls?${sharedQuery}`;
  const shared = await newPage();
  await shared.goto(sharedLink);
  await shared.waitForSelector('#sign-in');
  assert.equal(await shared.evaluate<number>('sessionStorage.length'), 0, 'a new tab is not signed in');
  await shared.fill('#email', TEST_ADMIN.email);
  await shared.fill('#password', TEST_ADMIN.password);
  await shared.click('#sign-in-button');
  await shared.waitForSelector('#events tbody tr');
  assert.equal(shared.url(), sharedLink);
  const sharedPage = await api<EventPage>(`/v1/admin/observability/events?${sharedQuery}&limit=50`);
  assert.ok(sharedPage.events.length > 0);
  await waitForEventIds(
    shared,
    sharedPage.events.map((e) => e.id),
  );
  assert.equal(await shared.inputValue('#filter-result'), 'denied');
  assert.equal(await shared.inputValue('#filter-agent_type'), first.agent_type);
  await shared.context().close();

  // A range that begins before the retention window, once retention has dropped a day that held an event: the events
  // still stored, then where the older ones went. This service has no archive, so the notice says that retention
  // deletes them.
  const oldDay = new Date(Date.now() - 95 * DAY).toISOString().slice(0, 10);
  const db = svc.runtime.database.db;
  await db.execute(sql`SELECT observability_events_add_partition(${oldDay}::date)`);
  await db.execute(sql`INSERT INTO observability_events (event_id, device_id, serial_number, event_time, agent_type,
      mcp_name, tool, event_type, result, tokens_in, tokens_out, duration_ms, skills, metadata, ingest_xid)
    SELECT gen_random_uuid(), id, serial_number, ${`${oldDay}T06:00:00Z`}::timestamptz, 'claude-code', 'github',
      'search', 'invocation', 'allowed', 1, 1, 10, '[]'::jsonb, '{}'::jsonb, pg_current_xact_id()
    FROM devices LIMIT 1`);
  await svc.runSchedule('rollupFold');
  assert.equal(((await svc.runSchedule('eventPartitions')) as { dropped: number }).dropped, 1);
  const longAgo = new Date(Date.now() - 100 * 86_400_000).toISOString().slice(0, 10);
  await page.fill('#filter-session_id', '');
  // The range picker takes a UTC wall-clock minute; the URL keeps it as RFC 3339.
  await page.fill('#filter-from', `${longAgo}T00:00`);
  await page.click('#apply-filters');
  await page.waitForURL(new RegExp(`/console/tool-calls\\?from=${longAgo}T00%3A00%3A00Z$`));
  await waitForEventRows(page, 50);
  const sinceLongAgo = await api<Retention>(
    `/v1/admin/observability/events?from=${longAgo}T00:00:00Z&limit=50`,
  );
  assert.ok(sinceLongAgo.archived_before, 'a range from before the cutoff');
  assert.equal(sinceLongAgo.archive_location, null, 'no archive configured');
  assert.match(
    await assertRetentionNotice(page, '#events-retention', sinceLongAgo),
    /^Events before .* are past the event retention window and no longer stored in the database\. No archive/,
  );
  await assertAccessible(page, '3c-tool-calls-past-retention');

  // An error event opened: its error message is the API's.
  await page.selectOption('#filter-result', 'error');
  await page.fill('#filter-from', '');
  await page.click('#apply-filters');
  await page.waitForURL(/\/console\/tool-calls\?result=error$/);
  const errors = await api<EventPage>('/v1/admin/observability/events?result=error&limit=50');
  assert.ok(errors.events.length > 0, 'the simulator made error events');
  await waitForEventIds(
    page,
    errors.events.map((e) => e.id),
  );
  const failed = errors.events[0] as EventPage['events'][number];
  await page.locator('#events a.event-link').first().click();
  await page.waitForURL(new RegExp(`result=error&event=${failed.id}$`));
  await page.waitForSelector('#detail-error');
  const errorEvent = await api<EventDetail>(`/v1/admin/observability/events/${failed.id}`);
  assert.ok(errorEvent.error_message, 'the simulator gives error events a message');
  assert.equal(await page.textContent('#detail-error'), errorEvent.error_message);

  // Summary: the API's totals.
  await page.click('nav a:has-text("Summary")');
  await page.waitForSelector('#summary-totals');
  await page.waitForSelector('#calls-chart canvas');
  await page.waitForSelector('#durations-chart canvas');
  await page.waitForSelector('#duration-series-chart canvas');
  type Point = {
    calls: number;
    duration_p50_ms: number | null;
    duration_p95_ms: number | null;
    duration_p99_ms: number | null;
  };
  const summary = await api<{ totals: { calls: number }; series: Point[] }>(
    '/v1/admin/observability/summary',
  );
  const shownCalls = await page.textContent('#summary-totals [data-total="calls"]');
  assert.equal(Number(shownCalls?.replace(/,/g, '')), summary.totals.calls);
  // uPlot's legend gives the numbers of the bucket under the cursor: the busiest bucket's, hovered.
  const busiest = summary.series.reduce(
    (best, b, i) => (b.calls > summary.series[best]!.calls ? i : best),
    0,
  );
  const over = (await page.locator('#calls-chart .u-over').boundingBox())!;
  await page.mouse.move(
    over.x + ((busiest + 0.5) / summary.series.length) * over.width,
    over.y + over.height / 2,
  );
  const legend = await page.locator('#calls-chart .u-legend .u-value').allTextContents();
  assert.match(legend[0]!, /UTC/);
  const counts = legend.slice(1).map((v) => Number(v.replace(/,/g, '')));
  assert.equal(counts.length, 3, `error, denied, allowed: ${legend.join(' | ')}`);
  assert.equal(
    counts.reduce((a, b) => a + b, 0),
    summary.series[busiest]!.calls,
  );
  // The durations over time: the same bucket hovered shows its p99, p95 and p50 as the API gives them.
  const overDurations = (await page.locator('#duration-series-chart .u-over').boundingBox())!;
  await page.mouse.move(
    overDurations.x + ((busiest + 0.5) / summary.series.length) * overDurations.width,
    overDurations.y + overDurations.height / 2,
  );
  const durations = await page.locator('#duration-series-chart .u-legend .u-value').allTextContents();
  assert.match(durations[0]!, /UTC/);
  const point = summary.series[busiest]!;
  assert.deepEqual(
    durations.slice(1).map((v) => Number(v.replace(/,|\s*ms$/g, ''))),
    [point.duration_p99_ms, point.duration_p95_ms, point.duration_p50_ms],
    durations.join(' | '),
  );
  assert.ok(point.duration_p99_ms !== null);
  await assertAccessible(page, '4-summary');

  // Sign out clears everything.
  await page.click('#sign-out');
  await page.waitForSelector('#sign-in');
  assert.equal(await page.evaluate<number>('sessionStorage.length'), 0);
  assert.equal(await page.evaluate<number>('localStorage.length'), 0);
  await page.goBack();
  await page.waitForSelector('#sign-in');
  await page.context().close();
  assert.deepEqual(browserProblems, []);
});

/**
 * The agent CLI's login, opened in a new page: the console's approval page, signed in, showing the client and the
 * loopback address the agent sent, and when it asked (as the API gives it). What the agent is, and the page.
 */
async function openCliApproval(screenshots: { before: string; after: string }) {
  const agent = await startAgentLogin(svc.url);
  const page = await newPage();
  await page.goto(agent.url);
  const match = /\/console\/cli\/login\?request=([0-9a-f-]{36})$/.exec(page.url());
  assert.ok(match, page.url());
  await page.waitForSelector('#sign-in');
  await assertAccessible(page, screenshots.before);
  await page.fill('#email', TEST_ADMIN.email);
  await page.fill('#password', TEST_ADMIN.password);
  await page.click('#sign-in-button');
  await page.waitForSelector('#approve-cli');
  await assertCliSigninShown(page, agent.asked);
  const asked = await api<{ created_at: string; expires_at: string }>(`/v1/auth/cli/requests/${match[1]}`);
  assert.equal(await page.getAttribute('#cli-asked', 'datetime'), asked.created_at);
  assert.equal(await page.textContent('#cli-asked'), consoleTime(asked.created_at));
  assert.equal(await page.textContent('#cli-expires'), consoleTime(asked.expires_at));
  await assertAccessible(page, screenshots.after);
  return { ...agent, page, approvalUrl: page.url() };
}

test('the agent CLI signs in through the console page that dashboard_url points to', {
  timeout: 90_000,
}, async () => {
  const { login, state, page } = await openCliApproval({ before: '5-cli-sign-in', after: '6-cli-approve' });
  await page.click('#approve-cli');
  await page.waitForURL(/127\.0\.0\.1:\d+\/callback\?code=/);
  await finishAgentLoginAndRegister(login, svc.url, state);
  await page.context().close();
  assert.deepEqual(browserProblems, []);
});

test('refused on the console page, the agent CLI stops at once and the sign-in stays refused', {
  timeout: 90_000,
}, async () => {
  const { login, state, page, asked, approvalUrl } = await openCliApproval({
    before: '6b-cli-sign-in',
    after: '6c-cli-refuse',
  });
  await page.click('#refuse-cli');
  await page.waitForURL(new RegExp(`^http://${asked.loopback}/callback\\?error=access_denied&state=`));
  assert.match((await page.textContent('body')) ?? '', /Sign-in refused/);
  await assertAgentLoginRefused(login, state);
  // Opened again (still signed in, in this tab): the refusal stands, and nothing is left to decide.
  await page.goto(approvalUrl);
  await page.waitForSelector('#cli-outcome');
  assert.match((await page.textContent('#cli-outcome')) ?? '', /was refused/);
  assert.equal(await page.locator('#approve-cli, #refuse-cli').count(), 0);
  await assertCliSigninShown(page, asked);
  await assertAccessible(page, '6d-cli-refused');
  await page.context().close();
  assert.deepEqual(browserProblems, []);
});

test('requests in the console: one denied with a reason; one whose scope and usage are shown, approved, revoked', {
  timeout: 90_000,
}, async () => {
  const ana = {
    email: 'ana@example.test',
    name: 'Ana',
    password: 'a long password for ana',
    roles: ['user'],
  };
  assert.equal((await svc.call('POST', '/v1/admin/users', { token, body: ana })).status, 201);
  const anaLogin = await svc.call('POST', '/v1/auth/login', {
    body: { email: ana.email, password: ana.password },
  });
  const anaToken = (anaLogin.body.data as { access_token: string }).access_token;
  const create = async (body: object, key: string) => {
    const created = await svc.call('POST', '/v1/requests', {
      token: anaToken,
      body,
      headers: { 'idempotency-key': key },
    });
    assert.equal(created.status, 201, created.text);
    return (created.body.data as { id: string }).id;
  };
  const denyId = await create(demoOrdersRequest('Console denial'), 'console-denial-1');
  const id = await create({ title: 'Console approval', scope: demoJoinedScope }, 'console-approval-1');
  type Dataset = {
    namespace: string;
    source: { kind: string; name: string; table?: string };
    columns: string[];
    joins: { namespace: string }[];
    filters?: unknown;
  };
  type RequestView = {
    status: string;
    approval_notes: string | null;
    denial_reason: string | null;
    scope: { datasources: { datasets: Dataset[] }[] };
    usage_events: { id: string; action_type: string; ip_address: string; timestamp: string }[];
  };
  const requestTitles = async () => page.locator('#requests a.request-link').allTextContents();
  const pendingTitles = async () =>
    (
      await api<{ requests: { title: string }[] }>(
        '/v1/admin/requests?status=pending&sort=-created_at&limit=20',
      )
    ).requests.map((r) => r.title);

  const page = await newPage();
  await page.goto(`${svc.url}/console/requests?status=pending`);
  await page.fill('#email', TEST_ADMIN.email);
  await page.fill('#password', TEST_ADMIN.password);
  await page.click('#sign-in-button');
  await page.waitForSelector('#requests tbody tr');
  assert.deepEqual(await requestTitles(), await pendingTitles());

  // Denied with a reason: the page shows the state and the reason the API stored.
  await page.click(`#requests a.request-link[href$="request=${denyId}"]`);
  await page.waitForURL(new RegExp(`status=pending&request=${denyId}$`));
  await page.fill('#deny-text', 'not while the audit is open');
  await page.click('#deny-button');
  await page.locator('#request-status-value', { hasText: /^denied$/ }).waitFor();
  const deniedView = await api<RequestView>(`/v1/admin/requests/${denyId}`);
  assert.deepEqual([deniedView.status, deniedView.denial_reason], ['denied', 'not while the audit is open']);
  assert.equal(await page.textContent('#request-status-value'), deniedView.status);
  assert.equal(await page.textContent('#request-denial-reason'), deniedView.denial_reason);
  assert.equal(
    await page.locator('#approve-button, #deny-button, #revoke-button').count(),
    0,
    'no move is left',
  );
  // The pending list is read again: the denied request has left it.
  await page.locator(`#requests a.request-link[href$="request=${denyId}"]`).waitFor({ state: 'detached' });
  assert.deepEqual(await requestTitles(), await pendingTitles());

  await page.click(`#requests a.request-link[href$="request=${id}"]`);
  await page.waitForURL(new RegExp(`status=pending&request=${id}$`));
  await page.waitForSelector('#approve-button');
  // The scope: each dataset as the API gives it (namespace, source, columns, joins, whether rows are filtered).
  const scopeShown = async () =>
    Promise.all(
      (await page.locator('#request-scope li').all()).map(async (li) => ({
        namespace: await li.getAttribute('data-namespace'),
        text: (await li.textContent()) ?? '',
      })),
    );
  const pending = await api<RequestView>(`/v1/admin/requests/${id}`);
  const datasets = pending.scope.datasources.flatMap((ds) => ds.datasets);
  assert.ok(datasets.length > 1 && datasets.some((d) => d.joins.length > 0 && d.filters));
  const shownScope = await scopeShown();
  assert.deepEqual(
    shownScope.map((d) => d.namespace),
    datasets.map((d) => d.namespace),
  );
  for (const [i, d] of datasets.entries()) {
    const text = shownScope[i]?.text ?? '';
    const source = `${d.source.kind} ${d.source.name}${d.source.table ? `.${d.source.table}` : ''}`;
    assert.ok(text.startsWith(`${d.namespace}: ${source}, columns ${d.columns.join(', ')}`), text);
    assert.equal(
      text.includes(`; joins ${d.joins.map((j) => j.namespace).join(', ')}`),
      d.joins.length > 0,
      text,
    );
    assert.equal(text.endsWith('; filtered rows'), Boolean(d.filters), text);
  }
  assert.deepEqual(pending.usage_events, []);
  assert.equal(await page.locator('#request-usage').count(), 0, 'no usage before any query');
  await assertAccessible(page, '7-request-pending');
  await page.fill('#approve-text', 'ok for the console test');
  await page.click('#approve-button');
  await page.waitForSelector('#revoke-button');
  assert.equal(await page.textContent('#request-status-value'), 'active');
  const approved = await api<RequestView>(`/v1/admin/requests/${id}`);
  assert.deepEqual([approved.status, approved.approval_notes], ['active', 'ok for the console test']);

  // Usage: the requester's queries under the request, on its view as the API lists them.
  for (const text of ['SELECT count(*) FROM eu_orders', 'SELECT name FROM products LIMIT 3']) {
    const ran = await svc.call('POST', `/v1/requests/${id}/query`, { token: anaToken, body: { sql: text } });
    assert.equal(ran.status, 200, ran.text);
  }
  await page.reload();
  await page.waitForSelector('#request-usage li');
  const used = await api<RequestView>(`/v1/admin/requests/${id}`);
  assert.equal(used.usage_events.length, 2);
  const usageItems = await page.locator('#request-usage li').all();
  assert.equal(usageItems.length, used.usage_events.length);
  for (const [i, u] of used.usage_events.entries()) {
    const li = usageItems[i] as (typeof usageItems)[number];
    assert.equal(await li.locator('time').getAttribute('datetime'), u.timestamp);
    assert.equal(
      await li.textContent(),
      `${consoleTime(u.timestamp)}: ${u.action_type} from ${u.ip_address}`,
    );
  }
  await assertAccessible(page, '8-request-active');

  // Revoked with a reason: the API has the state, and the reason in the revocation's audit record.
  await page.fill('#revoke-text', 'done with it');
  await page.click('#revoke-button');
  await page.locator('#request-status-value', { hasText: /^revoked$/ }).waitFor();
  assert.equal(
    await page.textContent('#request-status-value'),
    (await api<RequestView>(`/v1/admin/requests/${id}`)).status,
  );
  assert.equal(await page.locator('#revoke-button').count(), 0, 'a revoked request offers no move');
  const revocations = await api<{ logs: { metadata: { reason?: string } }[] }>(
    `/v1/admin/audit-logs?resource_id=${id}&action_type=request.revoked`,
  );
  assert.deepEqual(
    revocations.logs.map((l) => l.metadata.reason),
    ['done with it'],
  );

  // The audit log of that request, and the chain's verification in words.
  await page.goto(`${svc.url}/console/audit-log?resource_id=${id}`);
  await page.waitForSelector('#audit-logs tbody tr');
  const actions = await page.locator('#audit-logs tbody td:nth-child(2)').allTextContents();
  const logs = await api<{ logs: { action_type: string }[] }>(
    `/v1/admin/audit-logs?resource_id=${id}&sort=-created_at&limit=50`,
  );
  assert.deepEqual(
    actions,
    logs.logs.map((l) => l.action_type),
  );
  assert.ok(actions.includes('request.approved') && actions.includes('request.revoked'), actions.join());
  // The banner walks on from the last verified point (the first walk from the first record); either way it counts
  // every record of the chain.
  const verified = await api<{ checked: number; verified_from: { count: number } | null }>(
    '/v1/admin/audit-logs/verify?since=verified',
  );
  const records = (verified.verified_from?.count ?? 0) + verified.checked;
  assert.match(
    (await page.textContent('#chain-result')) ?? '',
    new RegExp(`^Intact: ${shownCount(records)} records`),
  );
  // The request by its title, linked to its page; a record expanded shows what it holds (the revocation's reason).
  const title = (await api<RequestView & { title: string }>(`/v1/admin/requests/${id}`)).title;
  const resourceLinks = await page.locator('#audit-logs td.resource a').allTextContents();
  assert.ok(
    resourceLinks.length === actions.length && resourceLinks.every((t) => t === title),
    resourceLinks.join(),
  );
  const revokedRow = page.locator('#audit-logs tbody', { hasText: 'request.revoked' });
  await revokedRow.locator('button.expand').click();
  assert.equal(await revokedRow.locator('button.expand').getAttribute('aria-expanded'), 'true');
  assert.deepEqual(
    JSON.parse((await revokedRow.locator('.audit-metadata').textContent()) ?? '{}').reason,
    'done with it',
  );
  await assertAccessible(page, '9-audit-log');

  // The whole log: routine device records are hidden unless asked for; the action picker offers what the log holds.
  await page.goto(`${svc.url}/console/audit-log`);
  await page.waitForSelector('#audit-logs tbody tr');
  type Page = { logs: { action_type: string }[]; total: number };
  const withRoutine = await api<Page>('/v1/admin/audit-logs?limit=50');
  const withoutRoutine = await api<Page>('/v1/admin/audit-logs?limit=50&routine=hide');
  assert.ok(withoutRoutine.total < withRoutine.total, 'the simulator registered devices');
  const shownActions = () => page.locator('#audit-logs tbody td:nth-child(2)').allTextContents();
  assert.deepEqual(
    await shownActions(),
    withoutRoutine.logs.map((l) => l.action_type),
  );
  await page.check('#audit-routine');
  await page.click('#apply-audit-filters');
  await page.waitForURL(/routine=show/);
  // (Locators, not page functions from strings: the console's CSP has no 'unsafe-eval'.)
  await page.locator('#audit-logs caption', { hasText: `of ${shownCount(withRoutine.total)},` }).waitFor();
  assert.deepEqual(
    await shownActions(),
    withRoutine.logs.map((l) => l.action_type),
  );
  const known = await api<{ actions: { action_type: string; records: number }[] }>(
    '/v1/admin/audit-logs/actions',
  );
  await page.locator('#audit-action option').nth(known.actions.length).waitFor({ state: 'attached' });
  const options = await page.locator('#audit-action option').all();
  assert.deepEqual(
    (await Promise.all(options.map((o) => o.getAttribute('value')))).slice(1),
    known.actions.map((a) => a.action_type),
  );
  await page.selectOption('#audit-action', 'device.registered');
  await page.click('#apply-audit-filters');
  await page.waitForURL(/action_type=device\.registered/);
  const registered = await api<Page>('/v1/admin/audit-logs?limit=50&action_type=device.registered');
  await page.locator('#audit-logs caption', { hasText: `of ${shownCount(registered.total)},` }).waitFor();
  assert.ok((await shownActions()).every((a) => a === 'device.registered'));
  assert.equal((await shownActions()).length, registered.logs.length);
  await page.context().close();
  assert.deepEqual(browserProblems, []);
});

test('a refused token ends the session: the console forgets it and asks to sign in again', {
  timeout: 60_000,
}, async () => {
  const page = await newPage();
  await page.goto(`${svc.url}/console/?status=online`);
  await page.fill('#email', TEST_ADMIN.email);
  await page.fill('#password', TEST_ADMIN.password);
  await page.click('#sign-in-button');
  await page.waitForSelector('#devices tbody tr');
  assert.equal(await page.locator('#devices tbody tr').count(), DEVICES, 'every simulated device is online');
  // Every device was seen within the online threshold moments ago: none is offline, and the page says so.
  assert.deepEqual((await api<{ devices: unknown[] }>('/v1/admin/devices?status=offline')).devices, []);
  await page.selectOption('#device-status', 'offline');
  await page.waitForURL(/\/console\/\?status=offline$/);
  await page.locator('p.state.empty', { hasText: 'No device is offline.' }).waitFor();
  await page.evaluate(`(() => {
    const s = JSON.parse(sessionStorage.getItem('acp.console.session'));
    sessionStorage.setItem('acp.console.session', JSON.stringify({ ...s, token: 'not-a-token' }));
  })()`);
  await page.reload();
  await page.waitForSelector('#session-notice');
  assert.match((await page.locator('#session-notice').textContent()) ?? '', /^Signed out: /);
  await page.waitForSelector('#sign-in');
  assert.equal(await page.evaluate<number>('sessionStorage.length'), 0);
  await page.context().close();
  assert.deepEqual(browserProblems, []);
});

test('a service that stops answering: the page says so in words with a Retry that keeps its filters', {
  timeout: 60_000,
}, async () => {
  const page = await newPage();
  await signIn(page, `${svc.url}/console/tool-calls?result=denied`);
  await page.waitForSelector('#events tbody tr');
  // The service goes away: every API call is refused at the network, as a stopped server's are.
  await page.route('**/v1/**', (route) => route.abort('connectionrefused'));
  await page.reload();
  const failed = page.locator('.state.error');
  await failed.waitFor();
  assert.match(
    (await failed.textContent()) ?? '',
    /^Could not load .*: The service is not answering\. Check that it is running, then retry\. ?Retry$/,
  );
  assert.doesNotMatch((await failed.textContent()) ?? '', /TypeError|fetch/);
  await assertAccessible(page, 'service-not-answering');
  // Back: Retry loads the same page, its filters kept.
  await page.unroute('**/v1/**');
  await page.getByRole('button', { name: 'Retry' }).click();
  await page.waitForSelector('#events tbody tr');
  assert.match(page.url(), /\/console\/tool-calls\?result=denied$/);
  const results = await page.locator('#events tbody tr td:nth-child(2)').allTextContents();
  assert.ok(results.length > 0 && results.every((r) => r.startsWith('denied')), results.join(', '));
  await page.context().close();
});

test('the catalog: listed as the API lists it, an entry edited, a new one created', {
  timeout: 60_000,
}, async () => {
  const page = await newPage();
  await page.goto(`${svc.url}/console/catalog`);
  await page.fill('#email', TEST_ADMIN.email);
  await page.fill('#password', TEST_ADMIN.password);
  await page.click('#sign-in-button');
  await page.waitForSelector('#catalog tbody tr');
  const listed = await api<{ entries: { id: string; target_name: string }[]; total: number }>(
    '/v1/catalog?sort=datasource_name&limit=50',
  );
  assert.ok(listed.total > 0, 'the demo datasource has catalog entries');
  assert.equal(await page.locator('#catalog tbody tr').count(), listed.entries.length);
  const first = listed.entries[0] as { id: string; target_name: string };
  await page.click(`#catalog a.entry-link >> nth=0`);
  await page.waitForURL(new RegExp(`/console/catalog\\?entry=${first.id}$`));
  await page.fill('#entry-summary', 'Edited in the console');
  await page.click('#save-entry');
  await page.locator('#catalog tbody tr', { hasText: 'Edited in the console' }).waitFor();
  const edited = await svc.call('GET', `/v1/catalog/${first.id}`, { token });
  assert.equal((edited.body.data as { summary: string }).summary, 'Edited in the console');
  // The form is read again after the save: it shows the entry as stored.
  let shown = '';
  for (let i = 0; i < 50 && shown !== 'Edited in the console'; i++) {
    await new Promise((r) => setTimeout(r, 100));
    shown = await page.inputValue('#entry-summary');
  }
  assert.equal(shown, 'Edited in the console', 'the form shows the saved entry');
  await assertAccessible(page, '10-catalog');

  await page.click('#new-entry');
  await page.fill('#entry-datasource_id', 'console-ds');
  await page.fill('#entry-datasource_name', 'console');
  await page.fill('#entry-target_name', 'from_the_console');
  await page.click('#save-entry');
  await page.locator('#catalog tbody tr', { hasText: 'from_the_console' }).waitFor();
  const created = await api<{ entries: { target_name: string }[] }>('/v1/catalog?datasource_name=console');
  assert.deepEqual(
    created.entries.map((e) => e.target_name),
    ['from_the_console'],
  );
  await page.context().close();
  assert.deepEqual(browserProblems, []);
});

test('fleet questions: who has not reported in a week, by owner, by agent and MCP server, sorted; one device on its own page', {
  timeout: 120_000,
}, async () => {
  const db = svc.runtime.database.db;
  type Device = { id: string; serial_number: string; owner_email: string; last_seen_at: string };
  const listed = async (query: string) =>
    (await api<{ devices: Device[] }>(`/v1/admin/devices?limit=100&${query}`)).devices.map(
      (d) => d.serial_number,
    );
  const all = (await api<{ devices: Device[] }>('/v1/admin/devices?limit=100&sort=serial')).devices;
  const quiet = all[1] as Device;
  // One laptop last reported ten days ago.
  await db.execute(
    sql`UPDATE devices SET last_seen_at = now() - interval '10 days' WHERE id = ${quiet.id}::uuid`,
  );
  try {
    const page = await newPage();
    await signIn(page, `${svc.url}/console/`);
    await page.waitForSelector('#devices tbody tr');
    const shownSerials = async () => (await page.evaluate(fleetRowsOnPage, '#devices')).map((r) => r.name);
    /** The rows once they are `expected`: a page shows its previous rows until the new ones arrive. */
    const expectSerials = async (expected: string[], sorted = false) => {
      const deadline = Date.now() + 15_000;
      let shown = await shownSerials();
      while (
        JSON.stringify(sorted ? shown.sort() : shown) !== JSON.stringify(expected) &&
        Date.now() < deadline
      ) {
        await new Promise((r) => setTimeout(r, 100));
        shown = await shownSerials();
      }
      assert.deepEqual(sorted ? shown.sort() : shown, expected);
    };

    // "Which device has not reported in a week?"
    await page.selectOption('#device-not-seen', '7d');
    await page.click('#device-filters button[type="submit"]');
    await page.waitForURL(/not_seen=7d/);
    await page.waitForFunction(
      () =>
        (
          globalThis as unknown as { document: { querySelectorAll(s: string): ArrayLike<unknown> } }
        ).document.querySelectorAll('#devices tbody tr').length === 1,
    );
    const weekAgo = new Date(Date.now() - 7 * DAY).toISOString();
    await expectSerials(await listed(`last_seen_before=${weekAgo}`));
    await expectSerials([quiet.serial_number]);
    const seen = await page.locator('#devices tbody tr td:nth-child(4) time');
    assert.equal(await seen.textContent(), '10 days ago');
    assert.equal(
      await seen.getAttribute('title'),
      consoleTime((await api<{ device: Device }>(`/v1/admin/devices/${quiet.id}`)).device.last_seen_at),
    );
    await page.getByRole('button', { name: 'Clear' }).click();
    await page.waitForFunction(
      (n) =>
        (
          globalThis as unknown as { document: { querySelectorAll(s: string): ArrayLike<unknown> } }
        ).document.querySelectorAll('#devices tbody tr').length === n,
      all.length,
    );

    // Search: part of the owner's email finds their devices, as the API's q does.
    const part = quiet.owner_email.slice(0, 5).toUpperCase();
    await page.fill('#device-search', part);
    await page.click('#device-filters button[type="submit"]');
    await page.waitForURL(new RegExp(`q=${part}`));
    await page.waitForSelector('#devices tbody tr');
    await expectSerials(await listed(`q=${encodeURIComponent(part)}`));
    await page.getByRole('button', { name: 'Clear' }).click();

    // Sorted by a column header: the API's order, then reversed.
    await page.click('button[data-sort="serial"]');
    await page.waitForURL(/sort=-serial/);
    await page.waitForSelector('#devices tbody tr');
    await expectSerials(await listed('sort=-serial'));
    await page.click('button[data-sort="serial"]');
    await page.waitForURL(/sort=serial/);
    await page.waitForFunction(
      (first) =>
        (
          globalThis as unknown as {
            document: { querySelector(s: string): { textContent: string | null } | null };
          }
        ).document.querySelector('#devices tbody tr td a')?.textContent === first,
      all[0]?.serial_number,
    );
    await expectSerials(await listed('sort=serial'));
    assert.equal(await page.getAttribute('button[data-sort="serial"] >> xpath=..', 'aria-sort'), 'ascending');

    // An agent's device count opens the devices it counts, filtered by that agent.
    await page.click('#tab-agents');
    const agents = (
      await api<{ agents: { agent_type: string; devices: number }[] }>('/v1/admin/agents?limit=100')
    ).agents;
    const agent = agents.find((a) => a.devices < all.length) ?? (agents[0] as { agent_type: string });
    await page
      .locator('#agents tbody tr', { hasText: agent.agent_type })
      .locator('a[data-devices-link]')
      .click();
    await page.waitForURL(new RegExp(`agent_type=${agent.agent_type}`));
    await page.waitForSelector('#devices tbody tr');
    await expectSerials(await listed(`agent_type=${agent.agent_type}`));
    // And an MCP server's.
    await page.click('#tab-mcps');
    const mcp = (await api<{ mcps: { name: string }[] }>('/v1/admin/mcps?limit=100')).mcps[0] as {
      name: string;
    };
    await page
      .locator('#mcps tbody tr')
      .filter({ hasText: mcp.name })
      .first()
      .locator('a[data-devices-link]')
      .click();
    await page.waitForURL(new RegExp(`mcp=${encodeURIComponent(mcp.name)}`));
    await page.waitForSelector('#devices tbody tr');
    await expectSerials((await listed(`mcp=${encodeURIComponent(mcp.name)}`)).sort(), true);
    await assertAccessible(page, 'fleet-filtered');

    // One device on its own page: its agents, MCP servers with their sources, latest calls and owner history.
    await page.locator('#devices tbody tr td a').first().click();
    await page.waitForURL(/\/console\/devices\/[0-9a-f-]+$/);
    const id = /\/devices\/([0-9a-f-]+)$/.exec(page.url())?.[1] as string;
    const detail = await api<{
      device: Device;
      agents: { agent_type: string }[];
      mcps: { name: string; source: { type: string; name: string; version?: string } | null }[];
      recent_events: { id: string }[];
    }>(`/v1/admin/devices/${id}`);
    await page.waitForSelector('#device-mcps tbody tr');
    assert.equal(await page.textContent('#device-serial'), detail.device.serial_number);
    assert.equal(await page.locator('#device-agents tbody tr').count(), detail.agents.length);
    assert.equal(await page.locator('#device-mcps tbody tr').count(), detail.mcps.length);
    const sources = await page.locator('#device-mcps tbody tr td:nth-child(4)').allTextContents();
    assert.deepEqual(
      sources,
      detail.mcps.map((m) =>
        m.source
          ? `${m.source.type} ${m.source.name}${m.source.version ? `${m.source.type === 'oci' ? ':' : '@'}${m.source.version}` : ''}`
          : '—',
      ),
    );
    assert.equal(await page.locator('#device-events tbody tr').count(), detail.recent_events.length);
    await page.waitForSelector('#device-history li');
    assert.match((await page.locator('#device-history li').first().textContent()) ?? '', /registered/);
    await assertAccessible(page, 'device');
    await page.context().close();
  } finally {
    await db.execute(sql`UPDATE devices SET last_seen_at = now() WHERE id = ${quiet.id}::uuid`);
  }
  assert.deepEqual(browserProblems, []);
});

test('tool calls: a preset range counted as the summary counts it, filters suggested from the API, deny reasons listed, the detail focused and closed by Escape; summary rows lead to their calls', {
  timeout: 120_000,
}, async () => {
  const page = await newPage();
  await signIn(page, `${svc.url}/console/tool-calls`);
  await page.waitForSelector('#events tbody tr');
  assert.match((await page.textContent('#match-count')) ?? '', /Choose a time range/);

  // A preset: the range lands in the URL, and the count is the summary's for the same filters and range.
  await page.click('#range-24h');
  await page.waitForURL(/\/console\/tool-calls\?from=[^&]+&range=24h$/);
  assert.equal(await page.getAttribute('#range-24h', 'aria-pressed'), 'true');
  const from = new URL(page.url()).searchParams.get('from') as string;
  assert.ok(Date.now() - Date.parse(from) - DAY < 120_000, `24 hours back: ${from}`);
  await page.waitForSelector('#match-count strong');
  const counted = await api<{ totals: { calls: number }; range: { from: string; to: string } }>(
    `/v1/admin/observability/summary?from=${encodeURIComponent(from)}&top=1`,
  );
  assert.equal(shownNumber(await page.textContent('#match-count strong')), counted.totals.calls);
  assert.ok((await page.textContent('#match-count'))?.includes(consoleTime(counted.range.from)));

  // The filter inputs suggest the values the API knows for the range, with their calls.
  type Values = { values: Record<string, { values: { value: string; calls?: number }[] }> };
  const known = await api<Values>(
    `/v1/admin/observability/filters?from=${encodeURIComponent(from)}&limit=50`,
  );
  for (const [input, list] of [
    ['agent_type', 'agent_type'],
    ['mcp', 'mcp'],
    ['tool', 'tool'],
    ['deny_code', 'deny_code'],
  ] as const) {
    const expected = known.values[list]?.values.map((v) => v.value) ?? [];
    assert.ok(expected.length > 0, `the simulator made ${list} values`);
    assert.equal(await page.getAttribute(`#filter-${input}`, 'list'), `values-${input}`);
    await page
      .locator(`#values-${input} option`)
      .nth(expected.length - 1)
      .waitFor({ state: 'attached' });
    const options = await page.locator(`#values-${input} option`).all();
    const shown = await Promise.all(options.map((o) => o.getAttribute('value')));
    assert.deepEqual(shown, expected);
  }

  // Denied calls with a chosen deny code: the list gives each one's reason, and the count follows the filters.
  const code = known.values.deny_code?.values[0]?.value as string;
  await page.selectOption('#filter-result', 'denied');
  await page.fill('#filter-deny_code', code);
  await page.click('#apply-filters');
  await page.waitForURL(new RegExp(`deny_code=${encodeURIComponent(code)}`));
  assert.ok(new URL(page.url()).searchParams.get('range') === '24h', 'the same range, still the preset');
  type EventPage = { events: { id: string; deny_reason: string | null }[] };
  const denied = await api<EventPage>(
    `/v1/admin/observability/events?result=denied&deny_code=${encodeURIComponent(code)}&from=${encodeURIComponent(from)}&limit=50`,
  );
  assert.ok(denied.events.length > 0);
  await waitForEventIds(
    page,
    denied.events.map((e) => e.id),
  );
  assert.deepEqual(
    await page.locator('#events tbody td.reason').allTextContents(),
    denied.events.map((e) => e.deny_reason ?? ''),
  );
  const deniedCount = await api<{ totals: { calls: number } }>(
    `/v1/admin/observability/summary?result=denied&deny_code=${encodeURIComponent(code)}&from=${encodeURIComponent(from)}&top=1`,
  );
  await page
    .locator('#match-count strong', { hasText: new RegExp(`^${shownCount(deniedCount.totals.calls)}$`) })
    .waitFor();

  // The detail takes focus; Escape closes it and gives focus back to the event's row.
  const firstId = denied.events[0]?.id as string;
  await page.focus(`#event-link-${firstId}`);
  await page.keyboard.press('Enter');
  await page.waitForURL(new RegExp(`event=${firstId}$`));
  await page.waitForSelector('#detail-deny-reason');
  const focused = () => page.evaluate<string | undefined>('document.activeElement?.id');
  assert.equal(await focused(), 'event-detail-title');
  await page.keyboard.press('Escape');
  await page.waitForSelector('#event-detail', { state: 'detached' });
  assert.ok(!page.url().includes('event='));
  assert.equal(await focused(), `event-link-${firstId}`);
  await assertAccessible(page, '3d-tool-calls-preset');

  // The summary's top rows lead to their calls over the summary's range.
  await page.click('nav a:has-text("Summary")');
  const summary = await api<{
    range: { from: string; to: string };
    top: { tools: { mcp_name: string; tool: string }[] };
  }>('/v1/admin/observability/summary');
  const top = summary.top.tools[0] as { mcp_name: string; tool: string };
  await page.click(`a:has-text("${top.mcp_name} · ${top.tool}")`);
  await page.waitForURL(/\/console\/tool-calls\?/);
  const followed = new URL(page.url()).searchParams;
  assert.deepEqual([followed.get('mcp'), followed.get('tool')], [top.mcp_name, top.tool]);
  // The summary's range: whole hours, the page's 24 hours.
  const [rangeFrom, rangeTo] = [followed.get('from') ?? '', followed.get('to') ?? ''];
  assert.equal(Date.parse(rangeFrom) % 3_600_000, 0, rangeFrom);
  assert.ok(Math.abs(Date.parse(rangeTo) - Date.parse(summary.range.to)) <= 3_600_000, rangeTo);
  const toolPage = await api<EventPage>(
    `/v1/admin/observability/events?mcp=${encodeURIComponent(top.mcp_name)}&tool=${encodeURIComponent(top.tool)}&from=${encodeURIComponent(rangeFrom)}&to=${encodeURIComponent(rangeTo)}&limit=50`,
  );
  await waitForEventIds(
    page,
    toolPage.events.map((e) => e.id),
  );
  await page.context().close();
});

test("the policy editor: a rule added in the table, checked (valid, the diff, the dry run's counts as the API gives them), saved as a new version; the device page names the version it fetched", {
  timeout: 120_000,
}, async () => {
  type Policy = { rules: Record<string, unknown>[]; default: { effect: string }; no_cache: string };
  const before = await api<{ version: number; policy: Policy }>('/v1/admin/policy');
  const page = await newPage();
  await signIn(page, `${svc.url}/console/policy`);
  await page.waitForSelector('#policy-version');
  assert.equal(await page.textContent('#policy-version'), String(before.version));
  assert.equal(await page.isDisabled('#save-policy'), true, 'nothing checked yet');

  // A rule added at the end of the table.
  await page.click('#add-rule');
  const row = page.locator('#policy-rules tbody tr').last();
  await row.locator('.rule-id').fill('no-delete');
  await row.locator('.rule-effect').selectOption('deny');
  await row.locator('.rule-mode').selectOption('enforce');
  await row.locator('.rule-match').fill('tool=delete_*');
  await row.locator('.rule-reason').fill('Deleting is not allowed here.');
  await page.click('#check-policy');
  await page.waitForSelector('#check-dry-run');
  assert.equal(await page.textContent('#check-valid'), 'Valid.');
  assert.deepEqual(await page.locator('#check-diff li').allTextContents(), ['no-delete: added']);
  const draft = {
    ...before.policy,
    rules: [
      ...before.policy.rules,
      {
        id: 'no-delete',
        effect: 'deny',
        mode: 'enforce',
        match: { tool: 'delete_*' },
        reason: 'Deleting is not allowed here.',
      },
    ],
  };
  const dry = await svc.call('POST', '/v1/admin/policy/dry-run', { token, body: { policy: draft, days: 7 } });
  assert.equal(dry.status, 200, dry.text);
  const counts = dry.body.data as { rules: { id: string; matched: number }[]; default: { matched: number } };
  const shown = await page
    .locator('#check-dry-run tbody tr')
    .evaluateAll((rows) =>
      rows.map((r) => [r.children[0]?.textContent ?? '', r.children[3]?.textContent ?? '']),
    );
  assert.deepEqual(shown, [
    ...counts.rules.map((r) => [r.id, shownCount(r.matched)]),
    ['(no rule)', shownCount(counts.default.matched)],
  ]);
  // A later edit makes the check stale: saving waits for another.
  await page.fill('#policy-reason', 'No deleting through MCP');
  assert.equal(await page.isDisabled('#save-policy'), false);
  await row.locator('.rule-reason').fill('Deleting is not allowed.');
  assert.equal(await page.isDisabled('#save-policy'), true, 'the check was of an earlier draft');
  await page.click('#check-policy');
  await page.locator('#check-title', { hasText: /^Check$/ }).waitFor();
  await page.click('#save-policy');
  await page.locator('#policy-version', { hasText: String(before.version + 1) }).waitFor();
  const after = await api<{ version: number; reason: string; policy: Policy }>('/v1/admin/policy');
  assert.equal(after.version, before.version + 1);
  assert.equal(after.reason, 'No deleting through MCP');
  assert.deepEqual(after.policy.rules.at(-1), {
    id: 'no-delete',
    effect: 'deny',
    mode: 'enforce',
    match: { tool: 'delete_*' },
    reason: 'Deleting is not allowed.',
  });
  await assertAccessible(page, '11-policy-saved');

  // A device's page says which version it last fetched, as the API does.
  const device = (await api<{ devices: { id: string }[] }>('/v1/admin/devices?limit=1')).devices[0] as {
    id: string;
  };
  const fetched = await api<{ current_version: number; devices: { version: number | null }[] }>(
    `/v1/admin/policy/devices?device_id=${device.id}`,
  );
  await page.goto(`${svc.url}/console/devices/${device.id}`);
  await page.waitForSelector('#device-facts');
  const version = fetched.devices[0]?.version ?? null;
  await page
    .locator('#device-policy', {
      hasText:
        version === null
          ? `never fetched (version ${fetched.current_version} is in force)`
          : `version ${version}`,
    })
    .waitFor();
  await page.context().close();
  assert.deepEqual(browserProblems, []);
});

test('past the retention window: pages name the cutoff and the archive as the API does; none before a drop', {
  timeout: 120_000,
}, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'console-archive-'));
  const archived = await startTestService('pglite', {
    events: { archive: { target: 'dir', dir, prefix: 'console' } },
  });
  try {
    const db = archived.runtime.database.db;
    const adminToken = await archived.adminToken();
    const read = async <T>(path: string): Promise<T> => {
      const res = await archived.call('GET', path, { token: adminToken });
      assert.equal(res.status, 200, res.text);
      return res.body.data as T;
    };
    // A day past the 90-day window with events of two sessions: one that goes on to now, one wholly in that day.
    const oldDay = new Date(Date.now() - 95 * DAY).toISOString().slice(0, 10);
    await db.execute(sql`SELECT observability_events_add_partition(${oldDay}::date)`);
    const device = randomUUID();
    await db.execute(sql`INSERT INTO devices (id, serial_number, brand, model, owner_subject,
        certificate_fingerprint, certificate_pem, key_type, cert_not_before, cert_not_after)
      VALUES (${device}::uuid, 'SER-RETAINED', 'b', 'm', 'o', ${device}, 'pem', 'p256', now(), now())`);
    const recent = new Date(Date.now() - 3 * 3_600_000).toISOString();
    const events = [
      [`${oldDay}T01:00:00Z`, 'sess-span'],
      [`${oldDay}T12:00:00Z`, 'sess-gone'],
      [recent, 'sess-span'],
      [new Date(Date.now() - 2 * 3_600_000).toISOString(), 'sess-span'],
    ];
    await db.execute(sql`INSERT INTO observability_events (event_id, device_id, serial_number, event_time,
        agent_type, mcp_name, tool, event_type, result, tokens_in, tokens_out, duration_ms, skills, metadata,
        ingest_xid, session_id)
      SELECT gen_random_uuid(), ${device}::uuid, 'SER-RETAINED', (t.e->>0)::timestamptz, 'claude-code', 'github',
        'search', 'invocation', 'allowed', 10, 2, 100, '[]'::jsonb, '{}'::jsonb, pg_current_xact_id(), t.e->>1
      FROM jsonb_array_elements(${JSON.stringify(events)}::jsonb) AS t(e)`);
    await archived.runSchedule('rollupFold');

    const page = await newPage();
    // Before retention drops anything: the session's read has no notice, and neither has a range inside the window.
    await signIn(page, `${archived.url}/console/tool-calls?session_id=sess-span`);
    await page.waitForSelector('#session-totals');
    await waitForEventRows(page, 3);
    const whole = await read<{ session: { calls: number } } & Retention>(
      '/v1/admin/observability/sessions/sess-span?limit=1',
    );
    assert.equal(whole.session.calls, 3);
    assert.equal(whole.archived_before, undefined, 'nothing dropped: the session says nothing');
    await assertRetentionNotice(page, '#session-retention', whole);
    const insideQuery = `from=${encodeURIComponent(recent)}`;
    const inside = await read<Retention>(`/v1/admin/observability/events?${insideQuery}&limit=50`);
    assert.equal(inside.archived_before, undefined);
    await page.goto(`${archived.url}/console/tool-calls?${insideQuery}`);
    await waitForEventRows(page, 2);
    await assertRetentionNotice(page, '#events-retention', inside);

    // The archive takes the old day's hours, then retention drops the day (it held events: an audit record says so).
    for (let i = 0; i < 10; i++) {
      const run = (await archived.runSchedule('eventArchive')) as { hours: number };
      if (run.hours === 0) break;
    }
    const maintained = (await archived.runSchedule('eventPartitions')) as { dropped: number };
    assert.equal(maintained.dropped, 1, 'the old day is dropped once archived');

    // The session: its stored events, and where the earlier ones may be.
    await page.goto(`${archived.url}/console/tool-calls?session_id=sess-span`);
    await page.waitForSelector('#session-retention');
    const span = await read<{ session: { calls: number } } & Retention>(
      '/v1/admin/observability/sessions/sess-span?limit=1',
    );
    assert.equal(span.session.calls, 2);
    assert.equal(span.archive_location, `${join(dir, 'console', 'events')}/`);
    assert.match(
      await assertRetentionNotice(page, '#session-retention', span),
      /^Earlier events of this session may have been before/,
    );
    await waitForEventRows(page, 2);

    // A range wholly past the window: an empty page that says why, and where those events are.
    const pastQuery = `from=${oldDay}T00:00:00Z&to=${oldDay}T23:59:59Z`;
    const past = await read<{ events: unknown[] } & Retention>(
      `/v1/admin/observability/events?${pastQuery}&limit=50`,
    );
    assert.deepEqual(past.events, []);
    assert.equal(past.archived_before, span.archived_before);
    assert.equal(past.archive_location, span.archive_location);
    await page.goto(`${archived.url}/console/tool-calls?${pastQuery}`);
    await page.waitForSelector('#events-retention');
    const empty = (await page.textContent('p.state.empty')) ?? '';
    assert.ok(
      empty.includes(
        `The range reaches before ${consoleTime(past.archived_before!)}, past the retention window`,
      ),
      empty,
    );
    assert.doesNotMatch(empty, /^No tool-call event matches/);
    assert.match(
      await assertRetentionNotice(page, '#events-retention', past),
      /^Events before .* are past the event retention window and no longer stored in the database\. They are in the archive at /,
    );
    assert.equal(await page.locator('#events').count(), 0);
    await assertAccessible(page, '11-retention-empty-page');

    // A session none of whose events is stored: the API's refusal, in words, names the cutoff and the archive.
    await page.goto(`${archived.url}/console/tool-calls?session_id=sess-gone`);
    await page.waitForSelector('#session-summary [role="alert"]');
    const refusal = (await page.textContent('#session-summary [role="alert"]')) ?? '';
    assert.ok(refusal.includes(`Events before ${span.archived_before}`), refusal);
    assert.ok(refusal.includes(`archived in ${span.archive_location}`), refusal);
    await page.context().close();
    assert.deepEqual(browserProblems, []);
  } finally {
    await archived.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
});
