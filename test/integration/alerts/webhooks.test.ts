// Alert webhooks end to end, on every driver (docs/policy.md, "Webhooks"): a new alert is posted to each configured
// destination on a local HTTP server, which verifies the HMAC-SHA256 signature over timestamp + body itself; a
// destination in an outage gets retries with backoff until it recovers; one that never answers ends in the
// dead-letter list the admin API shows. The same alert goes to EventBridge through the real AWS SDK (PutEvents,
// signed with SigV4) against a local endpoint that records the entries. Every response of the service is checked against the OpenAPI document.
import assert from 'node:assert/strict';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { useAwsKeys } from '#test/support/aws-keys.ts';
import { driversUnderTest } from '#test/support/databases.ts';
import { enrolledDevice, prepare, send } from '#test/support/device-requests.ts';
import { startTestService, type TestService } from '#test/support/service.ts';

type Json = Record<string, unknown>;
const SECRET = randomBytes(32).toString('base64');
const SETTLE_MS = 1500;

interface Received {
  path: string;
  body: string;
  signature: string;
  timestamp: string;
}

/** What a receiver does, as docs/policy.md tells it: HMAC of `<timestamp>.<body>`, a timestamp within 5 minutes. */
function verifies(r: Received): boolean {
  const expected = Buffer.from(
    `v1=${createHmac('sha256', SECRET).update(`${r.timestamp}.${r.body}`).digest('hex')}`,
  );
  const given = Buffer.from(r.signature);
  const fresh = Math.abs(Date.now() / 1000 - Number(r.timestamp)) <= 300;
  return fresh && given.length === expected.length && timingSafeEqual(given, expected);
}

const readBody = async (req: IncomingMessage) => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
};

for (const driver of driversUnderTest()) {
  describe(`alert webhooks on ${driver}`, () => {
    let svc: TestService;
    let admin: string;
    let receiver: Server;
    let restoreKeys: (() => void) | undefined;
    const received: Received[] = [];
    const putEvents: Json[] = [];
    // The flaky destination answers 503 this many more times.
    let outage = 2;

    before(async () => {
      receiver = createServer(async (req, res) => {
        const body = await readBody(req);
        if (req.headers['x-amz-target'] === 'AWSEvents.PutEvents') {
          assert.match(String(req.headers.authorization), /^AWS4-HMAC-SHA256 Credential=/);
          putEvents.push(...((JSON.parse(body) as { Entries: Json[] }).Entries ?? []));
          res.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' });
          res.end(JSON.stringify({ FailedEntryCount: 0, Entries: [{ EventId: 'e-1' }] }));
          return;
        }
        received.push({
          path: req.url ?? '',
          body,
          signature: String(req.headers['x-acp-signature']),
          timestamp: String(req.headers['x-acp-timestamp']),
        });
        const status = req.url === '/down' ? 500 : req.url === '/flaky' && outage-- > 0 ? 503 : 204;
        res.writeHead(status).end();
      });
      await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
      const base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
      // The EventBridge client signs with the default credential chain; the receiver checks no signature.
      restoreKeys = useAwsKeys('AKIDTESTEVENTS', 'test-secret-key');
      svc = await startTestService(driver, {
        dashboard_url: 'http://dashboard.test',
        db: { statement_timeout: '1s' },
        query: { statement_timeout: '500ms' },
        alerts: {
          settle: `${SETTLE_MS}ms`,
          webhook_secret: SECRET,
          webhooks: [
            { name: 'siem', url: `${base}/siem` },
            { name: 'slack', url: `${base}/slack`, format: 'slack' },
            { name: 'flaky', url: `${base}/flaky` },
            { name: 'down', url: `${base}/down` },
          ],
          eventbridge: { bus: 'acp-alerts', endpoint: base, region: 'eu-west-1' },
          delivery: { max_attempts: 3, backoff: '200ms', max_backoff: '400ms' },
        },
      });
      admin = await svc.adminToken();
    });
    after(async () => {
      await svc?.dispose();
      receiver?.close();
      restoreKeys?.();
    });

    test('a new alert is posted signed to each destination; retried through an outage; dead after the last try', async () => {
      const device = await enrolledDevice(svc.url, admin);
      const mcps = [
        {
          name: 'linear',
          enabled: true,
          transport: 'http',
          source: { type: 'remote', name: 'https://mcp.linear.app' },
        },
      ];
      const res = await send(
        svc.url,
        prepare('/v1/devices/inventory', device, {
          agents: [{ agentType: 'cursor', displayName: 'Cursor', mcps }],
        }),
      );
      assert.equal(res.status, 200);
      await sleep(SETTLE_MS + 50);
      await svc.runSchedule('alerts');

      const at = (path: string) => received.filter((r) => r.path === path);
      assert.equal(at('/siem').length, 1);
      const siem = at('/siem')[0] as Received;
      assert.ok(verifies(siem), 'the signature verifies');
      assert.equal(
        verifies({ ...siem, body: siem.body.replace('linear', 'LINEAR') }),
        false,
        'a changed body does not',
      );
      assert.equal(
        verifies({ ...siem, timestamp: String(Number(siem.timestamp) - 301) }),
        false,
        'an old one does not',
      );
      const payload = JSON.parse(siem.body) as Json;
      assert.equal(payload.event, 'alert.opened');
      assert.equal((payload.alert as Json).kind, 'new_server');
      assert.equal((payload.alert as Json).subject, 'remote:https://mcp.linear.app');
      const slack = JSON.parse((at('/slack')[0] as Received).body) as Json;
      assert.match(String(slack.text), /new server: remote:https:\/\/mcp\.linear\.app \(1 device\)/);
      assert.ok(Array.isArray(slack.blocks));
      assert.ok(verifies(at('/slack')[0] as Received));

      // EventBridge: one entry on the bus, with the documented source and detail type.
      assert.equal(putEvents.length, 1);
      const entry = putEvents[0] as Json;
      assert.equal(entry.EventBusName, 'acp-alerts');
      assert.equal(entry.Source, 'acp.alerts');
      assert.equal(entry.DetailType, 'Fleet Alert Opened');
      const detail = JSON.parse(String(entry.Detail)) as Json;
      assert.equal(detail.event, 'alert.opened');
      assert.equal((detail.alert as Json).subject, 'remote:https://mcp.linear.app');

      // The outage: 503, then 503 again after the backoff, then delivered.
      assert.equal(at('/flaky').length, 1);
      for (let i = 0; i < 6 && (at('/flaky').length < 3 || at('/down').length < 3); i++) {
        await sleep(450);
        await svc.runSchedule('alerts');
      }
      assert.equal(at('/flaky').length, 3);
      assert.equal(at('/down').length, 3);
      assert.ok(at('/flaky').every(verifies));

      const dead = await svc.call('GET', '/v1/admin/alerts/deliveries', { token: admin });
      assert.equal(dead.status, 200, dead.text);
      const letters = (dead.body.data as Json).deliveries as Json[];
      assert.deepEqual(
        letters.map((d) => [d.destination, d.attempts, d.last_error]),
        [['down', 3, 'HTTP 500']],
      );
      const delivered = await svc.call('GET', '/v1/admin/alerts/deliveries?status=delivered', {
        token: admin,
      });
      const done = ((delivered.body.data as Json).deliveries as Json[]).map((d) => [
        d.destination,
        d.attempts,
      ]);
      assert.deepEqual(done.sort(), [
        ['eventbridge', 1],
        ['flaky', 3],
        ['siem', 1],
        ['slack', 1],
      ]);

      // Nothing is sent again.
      const before = received.length;
      await sleep(450);
      await svc.runSchedule('alerts');
      assert.equal(received.length, before);
    });
  });
}
