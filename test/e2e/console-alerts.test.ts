// The console's alerts page in a real headless Chromium: alerts derived from real inventory reports (a new server on
// two laptops is one alert with two devices) are listed as the API lists them, filtered by kind, and one is
// acknowledged with a note; the API then says who acknowledged it. The page is checked with axe-core.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import type { DeviceIdentity } from '#agent/identity.ts';
import { deriveInventoryAlerts } from '#shared/alerts/derive.ts';
import { assertAccessibleConsole, launchChromium, tableCells } from '#test/support/browser.ts';
import { enrolledDevice, prepare, send } from '#test/support/device-requests.ts';
import { freePort } from '#test/support/free-port.ts';
import { startTestService, TEST_ADMIN, type TestService } from '#test/support/service.ts';

const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/console/', import.meta.url));
let svc: TestService;
let browser: Browser;
let token: string;

/** A report replaces the device's inventory: it lists every server the laptop has. */
const report = async (device: DeviceIdentity, names: string[]) => {
  const mcps = names.map((name) => ({
    name,
    enabled: true,
    transport: 'stdio',
    source: { type: 'npm', name: `mcp-${name}` },
  }));
  const res = await send(
    svc.url,
    prepare('/v1/devices/inventory', device, {
      agents: [{ agentType: 'cursor', displayName: 'Cursor', mcps }],
    }),
  );
  assert.equal(res.status, 200);
};

before(
  async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const port = await freePort();
    svc = await startTestService('pglite', { port, dashboard_url: `http://127.0.0.1:${port}/console` });
    token = await svc.adminToken();
    const laptops = [await enrolledDevice(svc.url, token), await enrolledDevice(svc.url, token)];
    await report(laptops[0] as DeviceIdentity, ['notes', 'weather']);
    await report(laptops[1] as DeviceIdentity, ['notes']);
    // The pass derives rows older than alerts.settle: run it as if that long had passed.
    const { config } = svc.runtime;
    await deriveInventoryAlerts(
      svc.runtime.database.db,
      config,
      new Date(Date.now() + config.alerts.settle + 1000),
    );
    browser = await launchChromium();
  },
  { timeout: 120_000 },
);

after(async () => {
  await browser?.close();
  await svc?.dispose();
});

test('alerts: listed with their device counts, filtered, one acknowledged with a note', {
  timeout: 120_000,
}, async () => {
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  await page.goto(`${svc.url}/console/alerts`);
  await page.fill('#email', TEST_ADMIN.email);
  await page.fill('#password', TEST_ADMIN.password);
  await page.click('#sign-in-button');
  await page.waitForSelector('#alerts tbody tr');
  const rows = () => tableCells(page, '#alerts tbody tr');
  const shown = await rows();
  const listed = (await svc.call('GET', '/v1/admin/alerts', { token })).body.data as {
    alerts: Array<{ id: string; subject: string; device_count: number }>;
  };
  assert.deepEqual(
    shown.map((r) => [r[2], Number(r[3])]),
    listed.alerts.map((a) => [a.subject, a.device_count]),
  );
  assert.deepEqual(shown.map((r) => [r[2], r[3]]).sort(), [
    ['npm:mcp-notes', '2'],
    ['npm:mcp-weather', '1'],
  ]);
  await assertAccessibleConsole(page, join(ARTIFACTS, 'alerts.png'));

  const notes = listed.alerts.find((a) => a.subject === 'npm:mcp-notes')!;
  const row = page.locator(`tr[data-alert="${notes.id}"]`);
  await row.locator('input[name="note"]').fill('approved tool');
  await row.getByRole('button', { name: 'Acknowledge' }).click();
  await row.locator('.acknowledged').waitFor();
  assert.match(
    await row.locator('.acknowledged').innerText(),
    /Acknowledged by admin@example\.test .*: approved tool/,
  );
  const read = (await svc.call('GET', `/v1/admin/alerts/${notes.id}`, { token })).body.data as Record<
    string,
    unknown
  >;
  assert.equal(read.status, 'acknowledged');
  assert.equal(read.acknowledged_by, TEST_ADMIN.email);
  assert.equal(read.acknowledge_note, 'approved tool');

  await page.selectOption('#alert-filters select[name="status"]', 'open');
  await page.click('#alert-filters button[type="submit"]');
  await page.waitForFunction(() => {
    const doc = (globalThis as unknown as { document: { querySelectorAll(s: string): ArrayLike<unknown> } })
      .document;
    return doc.querySelectorAll('#alerts tbody tr').length === 1;
  });
  assert.deepEqual(
    (await rows()).map((r) => r[2]),
    ['npm:mcp-weather'],
  );
  assert.match(page.url(), /\/console\/alerts\?status=open$/);
});
