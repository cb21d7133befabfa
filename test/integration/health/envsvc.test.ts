// The background probe checks the environment service when envsvc.provider = http: a local HTTP server plays it,
// answering its health check, then failing it, then going away. The healthcheck reports degraded (200, the database
// being up) while the service is down, and ok again once it answers, without a restart.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { driversUnderTest } from '#test/support/databases.ts';
import { randomSecret } from '#test/support/secrets.ts';
import { startTestService, type TestService } from '#test/support/service.ts';

const TOKEN = randomSecret();

for (const driver of driversUnderTest()) {
  describe(`health probe with the http environment service on ${driver}`, () => {
    let svc: TestService;
    let envsvc: Server;
    let answer = 200;
    const seen: Array<{ path: string | undefined; authorization: string | undefined }> = [];
    before(async () => {
      envsvc = createServer((req, res) => {
        seen.push({ path: req.url, authorization: req.headers.authorization });
        res.writeHead(answer, { 'content-type': 'application/json' }).end('{}');
      });
      await new Promise<void>((resolve) => envsvc.listen(0, '127.0.0.1', resolve));
      const url = `http://127.0.0.1:${(envsvc.address() as AddressInfo).port}`;
      svc = await startTestService(driver, {
        envsvc: { provider: 'http', url, token: TOKEN, timeout: '500ms' },
      });
    });
    after(async () => {
      await svc?.dispose();
      envsvc?.closeAllConnections();
      await new Promise<void>((resolve) => envsvc?.close(() => resolve()));
    });

    const probe = async () => {
      await svc.runSchedule('healthProbe');
      const res = await svc.call('GET', '/v1/healthcheck');
      const last = res.body.last_probe as {
        status: string;
        checks: Record<string, { status: string; error?: string }>;
      };
      return { status: res.status, overall: res.body.status, last };
    };

    test('up: ok, with the service checked through GET /health and its bearer token', async () => {
      const { status, overall, last } = await probe();
      assert.deepEqual([status, overall, last.status], [200, 'ok', 'ok']);
      assert.equal(last.checks.environment_service?.status, 'ok');
      assert.deepEqual(seen.at(-1), { path: '/health', authorization: `Bearer ${TOKEN}` });
    });

    test('answering an error: degraded, and the token is in no response', async () => {
      answer = 500;
      const { status, overall, last } = await probe();
      assert.deepEqual([status, overall, last.status], [200, 'degraded', 'degraded']);
      assert.equal(last.checks.environment_service?.status, 'unavailable');
      assert.match(last.checks.environment_service?.error ?? '', /answered 500/);
      const text = (await svc.call('GET', '/v1/healthcheck')).text;
      assert.ok(!text.includes(TOKEN));
    });

    test('back again: ok without a restart', async () => {
      answer = 204;
      const { overall, last } = await probe();
      assert.deepEqual([overall, last.checks.environment_service?.status], ['ok', 'ok']);
    });
  });
}
