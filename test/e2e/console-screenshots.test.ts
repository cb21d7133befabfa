// Every console page on a phone (390 px) and a desktop (1440 px) in a real headless Chromium from npm, on a fixed
// fleet and a fixed clock: no page wider than the screen, axe-core at both widths, the menu and the filters fold on
// the phone, it all works by keyboard, and each page's screenshot matches its committed baseline
// (test/e2e/screenshots/, compared by test/support/screenshots.ts; UPDATE_SCREENSHOTS=1 rewrites them).
//
// What makes the pictures repeat: the service's clock and its database's (PGlite reads the process's Date) are
// frozen, moved on by the test only between the steps that seed; the browser's clock is frozen at the same instant;
// the fleet is the simulator's for a fixed seed; the fonts are the browser package's own (launchChromium).
import assert from 'node:assert/strict';
import { after, before, mock, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { simulateDevice } from '#agent/simulate.ts';
import { seedDemoDatasource } from '#shared/requests/environments/demo.ts';
import { assertAccessibleConsole, launchChromium, screenshotPage } from '#test/support/browser.ts';
import { freePort } from '#test/support/free-port.ts';
import { demoOrdersRequest } from '#test/support/request-fixtures.ts';
import { assertScreenshotMatches } from '#test/support/screenshots.ts';
import { startTestService, TEST_ADMIN, type TestService } from '#test/support/service.ts';

/** The instant every page is photographed at (a Tuesday noon, UTC). */
const NOW = Date.parse('2026-03-10T12:00:00.000Z');
const MINUTE = 60_000;
const DEVICES = 6;
const EVENTS_PER_DEVICE = 100;
const SEED = 42;

let svc: TestService;
let browser: Browser;
/** Messages of the browser that report a refused resource (CSP) or an uncaught error, on any page. */
const browserProblems: string[] = [];

before(
  async () => {
    // Seeding starts half an hour before NOW: each device enrols a few minutes after the one before, so the fleet
    // has some devices online (seen in the last 15 minutes) and some not, each at its own time.
    mock.timers.enable({ apis: ['Date'], now: NOW - 30 * MINUTE });
    const port = await freePort();
    svc = await startTestService('pglite', { port, dashboard_url: `http://127.0.0.1:${port}/console` });
    const token = await svc.adminToken();
    await seedDemoDatasource(svc.runtime.database.db);
    for (let index = 0; index < DEVICES; index++) {
      mock.timers.tick(3 * MINUTE);
      const to = new Date();
      const from = new Date(to.getTime() - 24 * 60 * MINUTE);
      const stored = await simulateDevice({
        baseUrl: svc.url,
        token,
        seed: SEED,
        index,
        events: EVENTS_PER_DEVICE,
        from,
        to,
      });
      assert.equal(stored, EVENTS_PER_DEVICE);
    }
    mock.timers.tick(MINUTE);
    const created = await svc.call('POST', '/v1/requests', {
      token,
      body: demoOrdersRequest('EU orders for the churn study'),
      headers: { 'idempotency-key': 'screenshots-1' },
    });
    assert.equal(created.status, 201, created.text);
    await svc.runSchedule('rollupFold');
    mock.timers.setTime(NOW);
    browser = await launchChromium();
  },
  { timeout: 120_000 },
);

after(async () => {
  await browser?.close();
  await svc?.dispose();
  mock.timers.reset();
});

/** A page at `width`, its clock frozen at NOW (the service's), in UTC and US English whatever the machine's. */
async function newPage(width: number): Promise<Page> {
  const page = await screenshotPage(browser, width, NOW);
  page.on('console', (message) => {
    if (/Content Security Policy|Refused to/i.test(message.text())) browserProblems.push(message.text());
  });
  page.on('pageerror', (err) => browserProblems.push(`page error: ${err.message}`));
  return page;
}

/** Until the page has nothing left to load: no request in flight, no loading state, its fonts ready. */
async function settled(page: Page): Promise<void> {
  await page.waitForLoadState('networkidle');
  await page.waitForSelector('.state.loading', { state: 'detached' });
  await page.evaluate('document.fonts.ready');
}

test('every page on a phone (390 px) and a desktop (1440 px): no page wider than the screen, axe at both, the menu and the filters fold on the phone, it all works by keyboard, and each looks as its baseline', {
  timeout: 240_000,
}, async () => {
  const res = await svc.call('GET', '/v1/admin/devices?limit=1', { token: await svc.adminToken() });
  assert.equal(res.status, 200, res.text);
  const device = (res.body.data as { devices: { id: string }[] }).devices[0] as { id: string };
  const pages = [
    ['fleet', '/console/', '#devices tbody tr'],
    ['device', `/console/devices/${device.id}`, '#device-facts'],
    ['tool-calls', '/console/tool-calls', '#events tbody tr'],
    ['summary', '/console/summary', '#summary-totals'],
    ['requests', '/console/requests', '#requests tbody tr'],
    ['catalog', '/console/catalog', '#catalog tbody tr'],
    ['audit-log', '/console/audit-log', '#audit-logs tbody tr'],
    ['alerts', '/console/alerts', 'h1'],
    ['policy', '/console/policy', '#policy-version'],
  ] as const;
  for (const width of [390, 1440]) {
    const phone = width < 768;
    const page = await newPage(width);
    await page.goto(`${svc.url}/console/`);
    await page.fill('#email', TEST_ADMIN.email);
    await page.fill('#password', TEST_ADMIN.password);
    await page.click('#sign-in-button');
    await page.waitForSelector('#sign-out', { state: 'attached' });
    for (const [name, path, ready] of pages) {
      await page.goto(`${svc.url}${path}`);
      await page.waitForSelector(ready);
      await settled(page);
      const [scrollWidth, innerWidth] = await page.evaluate<[number, number]>(
        '[document.documentElement.scrollWidth, window.innerWidth]',
      );
      if (scrollWidth > innerWidth) {
        // What sticks out, for the message.
        const wide = await page.evaluate<string[]>(
          `[...document.querySelectorAll('body *')].filter((e) => !e.closest('.table-scroll') && e.getBoundingClientRect().right > innerWidth + 1)
            .slice(0, 5).map((e) => e.tagName + '#' + e.id + '.' + e.className)`,
        );
        assert.fail(`${name} at ${width} px is ${scrollWidth} px wide: ${wide.join(', ')}`);
      }
      // The pages' links: behind the Menu button on a phone, in the header on a desktop.
      assert.equal(await page.isVisible('#menu-button'), phone, `${name} at ${width} px: the Menu button`);
      assert.equal(
        await page.isVisible('#console-pages a >> nth=0'),
        !phone,
        `${name} at ${width} px: the links`,
      );
      const fold = page.locator('details.fold');
      if ((await fold.count()) > 0) {
        assert.equal(
          await fold.getAttribute('open'),
          phone ? null : '',
          `${name} at ${width} px: the filters`,
        );
      }
      await assertAccessibleConsole(page);
      // The audit chain's hash covers the records' ids, which are random.
      await assertScreenshotMatches(page, `console-${name}-${width}`, { mask: '#chain-head-hash' });
    }
    if (phone) {
      // By keyboard alone: the menu opens, a page is chosen, its filters unfold.
      await page.focus('#menu-button');
      await page.keyboard.press('Enter');
      assert.equal(await page.getAttribute('#menu-button', 'aria-expanded'), 'true');
      await page.locator('#console-pages a', { hasText: 'Tool calls' }).focus();
      await page.keyboard.press('Enter');
      await page.waitForURL(/\/console\/tool-calls$/);
      assert.equal(await page.isVisible('#console-pages a >> nth=0'), false, 'the menu closes on a choice');
      await page.locator('details.fold > summary').focus();
      await page.keyboard.press('Enter');
      assert.equal(await page.locator('details.fold').getAttribute('open'), '');
      await page.locator('#filter-result').focus();
      const outline = await page.evaluate<string>('getComputedStyle(document.activeElement).outlineStyle');
      assert.equal(outline, 'solid', 'focus is visible');
      await settled(page);
      await assertAccessibleConsole(page);
      await assertScreenshotMatches(page, 'console-tool-calls-390-filters-open');
    }
    await page.context().close();
  }
  assert.deepEqual(browserProblems, []);
});
