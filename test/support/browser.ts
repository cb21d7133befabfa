// A real headless Chromium for the browser tests, from npm: `@sparticuz/chromium` ships the binary (and the NSS
// libraries it links against, built for Amazon Linux 2023) inside its tarball, so no system browser, apt or download
// is needed. playwright-core drives it.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import sparticuz, { inflate } from '@sparticuz/chromium';
import { type Browser, chromium, type Page } from 'playwright-core';

const require = createRequire(import.meta.url);

/** Where the package keeps its compressed archives (`bin/*.br`). */
function archiveDir(): string {
  return join(dirname(require.resolve('@sparticuz/chromium')), '..', 'bin');
}

/**
 * Unpacks the browser (once per machine, into the temporary directory) and launches it headless. Its own libraries
 * come first on the library path, so it starts on a machine without libnss3 too; glibc is the only system library it
 * needs.
 */
export async function launchChromium(): Promise<Browser> {
  const executablePath = await sparticuz.executablePath();
  const libraries = join(await inflate(join(archiveDir(), 'al2023.tar.br')), 'lib');
  const libraryPath = [libraries, process.env.LD_LIBRARY_PATH].filter(Boolean).join(':');
  // Only the fonts the package ships, never the machine's: the same text renders the same on every machine, which
  // the screenshot baselines need.
  const fonts = await inflate(join(archiveDir(), 'fonts.tar.br'));
  const fontconfig = mkdtempSync(join(tmpdir(), 'chromium-fonts-'));
  writeFileSync(
    join(fontconfig, 'fonts.conf'),
    `<?xml version="1.0"?>\n<fontconfig><dir>${fonts}</dir>` +
      `<cachedir>${join(fontconfig, 'cache')}</cachedir></fontconfig>\n`,
  );
  // A person's browser has a language; under a POSIX locale (LANG unset or C) this one reports `en-US@posix`, which
  // Intl.NumberFormat refuses, and uPlot formats with navigator.language when the console loads.
  const browser = await chromium.launch({
    executablePath,
    headless: true,
    env: { ...process.env, LD_LIBRARY_PATH: libraryPath, LANG: 'en_US.UTF-8', FONTCONFIG_PATH: fontconfig },
    args: [
      '--no-sandbox',
      '--no-zygote',
      '--disable-gpu',
      // Glyph outlines as designed, not snapped to this machine's pixel grid.
      '--font-render-hinting=none',
      '--use-angle=swiftshader',
      '--no-first-run',
      // This machine's network is closed: no background connections at start.
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  browser.on('disconnected', () => rmSync(fontconfig, { recursive: true, force: true }));
  return browser;
}

let axeSource: string | undefined;

/**
 * axe-core in the page (evaluated through the DevTools protocol, which the page's CSP does not govern): no serious or
 * critical violation; then, given `screenshot`, the page is photographed there (kept as an artifact, not compared:
 * test/support/screenshots.ts compares).
 */
export async function assertAccessibleConsole(page: Page, screenshot?: string): Promise<void> {
  axeSource ??= readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
  await page.evaluate(axeSource);
  const violations = await page.evaluate<
    { id: string; impact: string | null; help: string; nodes: string[] }[]
  >(
    `axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({
      id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(' ')) })))`,
  );
  const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(serious, [], `${screenshot ?? page.url()}: axe found serious or critical violations`);
  if (screenshot) await page.screenshot({ path: screenshot, fullPage: true });
}

/**
 * The console's CLI sign-in page, once signed in, shows what the agent asked for before anyone decides: the
 * client_id it sent and the loopback host:port it listens on (test/support/child.ts startAgentLogin reads both from
 * the URL the agent printed).
 */
export async function assertCliSigninShown(
  page: Page,
  asked: { clientId: string; loopback: string },
): Promise<void> {
  await page.waitForSelector('#cli-request');
  assert.equal(await page.textContent('#cli-client'), asked.clientId);
  assert.equal(await page.textContent('#cli-loopback'), asked.loopback);
}

/**
 * The console's fleet page shows the counts of GET /v1/admin/fleet/summary (`devices`, its data's) and a row for each
 * device (a fleet of at most one page).
 */
export async function assertFleetCountsShown(page: Page, devices: Record<string, number>): Promise<void> {
  for (const key of ['total', 'online', 'offline', 'never_reported', 'new_24h']) {
    const shown = await page.textContent(`#fleet-counts [data-count="${key}"]`);
    assert.equal(Number(shown?.replace(/,/g, '')), devices[key], key);
  }
  assert.equal(await page.locator('#devices tbody tr').count(), devices.total);
}

/** The trimmed text of each cell of each row a selector finds (e.g. '#alerts tbody tr'), in page order. */
export async function tableCells(page: Page, rowSelector: string): Promise<string[][]> {
  const rows = await page.locator(rowSelector).all();
  return Promise.all(
    rows.map(async (row) => (await row.locator('td').allTextContents()).map((text) => text.trim())),
  );
}

/**
 * A page for screenshots at `width` (a phone's height below 768 px, a desktop's above), its clock frozen at `now`,
 * in UTC and US English with reduced motion whatever the machine's, so that baselines compare across machines.
 */
export async function screenshotPage(browser: Browser, width: number, now: number): Promise<Page> {
  const context = await browser.newContext({
    viewport: { width, height: width < 768 ? 844 : 900 },
    timezoneId: 'UTC',
    locale: 'en-US',
    reducedMotion: 'reduce',
  });
  await context.clock.setFixedTime(now);
  return context.newPage();
}
