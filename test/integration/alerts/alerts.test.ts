// Fleet alerts through HTTP, on every driver (docs/policy.md, "Alerts"): real inventory reports and events go through
// the device routes, the scheduled pass derives new servers, version and source changes, servers the policy denies
// and a spike of denied calls, one alert per change however many devices it covers; admins list, filter, page,
// read and acknowledge them (audited). Every response is checked against the OpenAPI document.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'drizzle-orm';
import type { DeviceIdentity } from '#agent/identity.ts';
import { col, queryRows } from '#shared/core/db/query.ts';
import { uuidParam } from '#shared/core/db/sql-values.ts';
import { driversUnderTest } from '#test/support/databases.ts';
import { enrolledDevice, invocationEvent, prepare, send } from '#test/support/device-requests.ts';
import { startTestService, type TestService } from '#test/support/service.ts';

type Json = Record<string, unknown>;
const data = (res: { body: Json }) => res.body.data as Json;
const GITHUB = '@modelcontextprotocol/server-github';
// Rows are derived once they are this old (alerts.settle); the pass runs after it.
const SETTLE_MS = 1500;

interface Server {
  name: string;
  source?: { type: string; name: string; version?: string };
}

for (const driver of driversUnderTest()) {
  describe(`alerts on ${driver}`, () => {
    let svc: TestService;
    let admin: string;
    const devices: DeviceIdentity[] = [];

    const report = async (device: DeviceIdentity, servers: Server[]) => {
      const mcps = servers.map((s) => ({ enabled: true, transport: 'stdio', ...s }));
      const res = await send(
        svc.url,
        prepare('/v1/devices/inventory', device, {
          agents: [{ agentType: 'claude-code', displayName: 'Claude Code', mcps }],
        }),
      );
      assert.equal(res.status, 200, JSON.stringify(res.body));
    };
    const pass = async () => {
      await sleep(SETTLE_MS + 50);
      return (await svc.runSchedule('alerts')) as Json;
    };
    const list = async (query = '') => {
      const res = await svc.call('GET', `/v1/admin/alerts${query}`, { token: admin });
      assert.equal(res.status, 200, res.text);
      return data(res).alerts as Json[];
    };
    /** An alert's last change (the Detection Finding export's position) and how many changes it has had. */
    const versionOf = async (id: unknown) => {
      const [row] = await queryRows(
        svc.runtime.database.db,
        sql`SELECT change_xid::text AS xid, revision FROM alerts WHERE id = ${uuidParam(String(id))}`,
        { xid: col.text, revision: col.number },
      );
      assert.ok(row, `alert ${String(id)}`);
      return row;
    };
    const one = async (kind: string) => {
      const found = (await list(`?kind=${kind}`)).filter((a) => a.kind === kind);
      assert.equal(found.length, 1, `one ${kind} alert: ${JSON.stringify(found)}`);
      return found[0] as Json;
    };

    before(async () => {
      svc = await startTestService(driver, {
        dashboard_url: 'http://dashboard.test',
        db: { statement_timeout: '1s' },
        query: { statement_timeout: '500ms' },
        alerts: { settle: `${SETTLE_MS}ms` },
      });
      admin = await svc.adminToken();
      for (let i = 0; i < 3; i++) devices.push(await enrolledDevice(svc.url, admin));
    });
    after(async () => svc?.dispose());

    test('a server new to the fleet is one alert, joined by every device that reports it while open', async () => {
      const github = { name: 'github', source: { type: 'npm', name: GITHUB, version: '1.0.0' } };
      // A pass before any server is reported rewinds to the start ('-infinity') and finds nothing; the next still finds.
      await pass();
      await report(devices[0] as DeviceIdentity, [github]);
      await pass();
      const first = await one('new_server');
      assert.equal(first.device_count, 1);
      const opened = await versionOf(first.id);
      assert.equal(opened.revision, 0, 'as opened');
      await report(devices[1] as DeviceIdentity, [github]);
      await report(devices[2] as DeviceIdentity, [github]);
      await pass();
      const alert = await one('new_server');
      // Devices joined it: a change, which the Detection Finding export sends again as an Update.
      const grown = await versionOf(alert.id);
      assert.ok(grown.revision >= 1, `revision ${grown.revision} after devices joined`);
      assert.ok(BigInt(grown.xid) > BigInt(opened.xid), 'its last change is the pass that added them');
      assert.equal(alert.subject, `npm:${GITHUB}`);
      assert.equal(alert.status, 'open');
      assert.equal(alert.device_count, 3);
      assert.equal(alert.first_seen_at, first.first_seen_at);
      assert.ok(
        String(alert.last_seen_at) > String(first.last_seen_at),
        'a pass that finds it again moves last_seen_at',
      );
      const detail = await svc.call('GET', `/v1/admin/alerts/${alert.id}`, { token: admin });
      assert.equal(detail.status, 200);
      assert.equal((data(detail).devices as Json[]).length, 3);
      // Reported again unchanged: nothing new, and no change to send again.
      await report(devices[0] as DeviceIdentity, [github]);
      await pass();
      assert.equal((await list()).length, 1);
      assert.deepEqual(await versionOf(alert.id), grown);
    });

    test('an upgrade rolled out to the fleet is one version_changed alert with its device count', async () => {
      const github = { name: 'github', source: { type: 'npm', name: GITHUB, version: '1.1.0' } };
      for (const device of devices) await report(device, [github]);
      await pass();
      const alert = await one('version_changed');
      assert.equal(alert.subject, `npm:${GITHUB}: 1.0.0 → 1.1.0`);
      assert.equal(alert.device_count, 3);
      assert.deepEqual(alert.details, {
        identity: `npm:${GITHUB}`,
        name: 'github',
        from: '1.0.0',
        to: '1.1.0',
      });
    });

    test('a server whose origin changes under the same name is source_changed', async () => {
      const github = { name: 'github', source: { type: 'oci', name: 'ghcr.io/evil/github-mcp-server' } };
      await report(devices[0] as DeviceIdentity, [github]);
      await pass();
      const alert = await one('source_changed');
      assert.equal(alert.subject, `github: npm:${GITHUB} → oci:ghcr.io/evil/github-mcp-server`);
      assert.equal(alert.device_count, 1);
      // The new origin is also a server the fleet never saw.
      assert.equal((await list('?kind=new_server')).length, 2);
    });

    test('a server present that the policy denies, found at the report and when the policy changes', async () => {
      const paste = { name: 'pastebin-uploader', source: { type: 'npm', name: 'pastebin-mcp' } };
      await report(devices[1] as DeviceIdentity, [paste]);
      await pass();
      assert.equal((await list('?kind=denied_server')).length, 0);
      const saved = await svc.call('PUT', '/v1/admin/policy', {
        token: admin,
        body: {
          reason: 'no paste sites',
          policy: {
            rules: [
              // Names a tool: denies only some calls, so it alone makes no alert.
              { id: 'no-writes', effect: 'deny', match: { server: 'github', tool: 'write_*' }, reason: 'no' },
              {
                id: 'no-pastebin',
                effect: 'deny',
                match: { server: 'pastebin-*' },
                reason: 'No paste sites.',
              },
            ],
            default: { effect: 'allow', reason: 'ok' },
            no_cache: 'open',
          },
        },
      });
      assert.equal(saved.status, 200, saved.text);
      const result = await pass();
      assert.equal(result.rewound, true);
      const alert = await one('denied_server');
      assert.equal(alert.subject, 'pastebin-uploader (npm:pastebin-mcp) denied by no-pastebin');
      assert.equal(alert.device_count, 1);
      assert.equal((alert.details as Json).reason, 'No paste sites.');
      await report(devices[2] as DeviceIdentity, [paste]);
      await pass();
      assert.equal((await one('denied_server')).device_count, 2);
    });

    test('a spike of denied calls against the baseline is one denied_spike alert', async () => {
      const at = new Date(Date.now() - 60_000).toISOString();
      const events = Array.from({ length: 25 }, () =>
        invocationEvent({
          event_time: at,
          result: 'denied',
          deny_code: 'policy_denied',
          deny_reason: 'No paste sites.',
          rule_applied: 'no-pastebin@1',
        }),
      );
      const stored = await send(
        svc.url,
        prepare('/v1/devices/events', devices[0] as DeviceIdentity, { events }),
      );
      assert.equal(stored.status, 200, JSON.stringify(stored.body));
      await svc.runSchedule('rollupFold');
      const result = await pass();
      assert.equal(result.spike, true);
      const alert = await one('denied_spike');
      assert.equal((alert.details as Json).denied, 25);
      assert.equal(alert.device_count, 1);
    });

    test('a tool whose definition differs for one server version (the rug pull) is one alert; an upgrade with a new definition is not', async () => {
      const hash = (c: string) => c.repeat(64);
      const fs = (version: string, tools: Array<{ name: string; hash: string }>) => ({
        name: 'files',
        source: { type: 'npm', name: '@modelcontextprotocol/server-filesystem', version },
        tools,
      });
      const [a, b, c] = devices as [DeviceIdentity, DeviceIdentity, DeviceIdentity];
      await report(a, [fs('2.0.0', [{ name: 'read_file', hash: hash('a') }])]);
      await report(b, [fs('2.0.0', [{ name: 'read_file', hash: hash('a') }])]);
      // An upgrade: another version, another definition. Not a rug pull.
      await report(c, [fs('2.1.0', [{ name: 'read_file', hash: hash('c') }])]);
      await pass();
      assert.deepEqual(await list('?kind=tool_definition_changed'), []);
      // The same version's tool changes on one device.
      await report(b, [fs('2.0.0', [{ name: 'read_file', hash: hash('b') }])]);
      await pass();
      const alert = await one('tool_definition_changed');
      assert.equal(alert.subject, 'npm:@modelcontextprotocol/server-filesystem@2.0.0: read_file');
      assert.equal(alert.device_count, 2, 'the devices that reported the tool under that version');
      assert.deepEqual(alert.details, {
        identity: 'npm:@modelcontextprotocol/server-filesystem',
        version: '2.0.0',
        tool: 'read_file',
        hashes: [
          { hash: hash('a'), devices: 2 },
          { hash: hash('b'), devices: 1 },
        ],
      });
      // Found again by the next pass: still one alert.
      await pass();
      assert.equal((await list('?kind=tool_definition_changed')).length, 1);
    });

    test('list filters and pages with a cursor; bad filters are 400 naming the field', async () => {
      const all = await list();
      // new_server ×4 (npm github, its OCI fork, pastebin, the filesystem server), version, source, denied server,
      // spike, tool definition.
      assert.equal(all.length, 9);
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const res = await svc.call('GET', `/v1/admin/alerts?limit=4${cursor ? `&cursor=${cursor}` : ''}`, {
          token: admin,
        });
        assert.equal(res.status, 200);
        seen.push(...(data(res).alerts as Json[]).map((a) => String(a.id)));
        cursor = data(res).next_cursor as string | null;
      } while (cursor);
      assert.deepEqual(
        seen,
        all.map((a) => String(a.id)),
      );
      const bad = await svc.call('GET', '/v1/admin/alerts?kind=rug_pull', { token: admin });
      assert.equal(bad.status, 400);
      assert.match(String(bad.body.message), /kind/);
      const badStatus = await svc.call('GET', '/v1/admin/alerts?status=closed', { token: admin });
      assert.equal(badStatus.status, 400);
      assert.match(String(badStatus.body.message), /status/);
      const noAuth = await svc.call('GET', '/v1/admin/alerts');
      assert.equal(noAuth.status, 401);
    });

    test('acknowledge: who and why on the alert and in the audit chain; twice is 409, unknown 404', async () => {
      const alert = await one('version_changed');
      const tooLong = await svc.call('POST', `/v1/admin/alerts/${alert.id}/acknowledge`, {
        token: admin,
        body: { note: 'x'.repeat(1001) },
      });
      assert.equal(tooLong.status, 400);
      assert.match(String(tooLong.body.message), /note/);
      assert.equal((await one('version_changed')).status, 'open');
      const was = await versionOf(alert.id);
      const acked = await svc.call('POST', `/v1/admin/alerts/${alert.id}/acknowledge`, {
        token: admin,
        body: { note: 'planned upgrade' },
      });
      assert.equal(acked.status, 200, acked.text);
      // The acknowledgement is one more change, and the last.
      const is = await versionOf(alert.id);
      assert.equal(is.revision, was.revision + 1);
      assert.ok(BigInt(is.xid) > BigInt(was.xid));
      assert.equal(data(acked).status, 'acknowledged');
      assert.equal(data(acked).acknowledged_by, 'admin@example.test');
      assert.equal(data(acked).acknowledge_note, 'planned upgrade');
      assert.equal(
        (await list('?status=open')).some((a) => a.id === alert.id),
        false,
      );
      assert.equal((await list('?status=acknowledged&kind=version_changed')).length, 1);
      const again = await svc.call('POST', `/v1/admin/alerts/${alert.id}/acknowledge`, {
        token: admin,
        body: {},
      });
      assert.equal(again.status, 409);
      assert.equal(again.body.error, 'alert_acknowledged');
      const missing = await svc.call(
        'POST',
        '/v1/admin/alerts/00000000-0000-4000-8000-000000000000/acknowledge',
        { token: admin, body: {} },
      );
      assert.equal(missing.status, 404);
      const audit = await svc.call('GET', '/v1/admin/audit-logs?resource_type=alert', { token: admin });
      assert.equal(audit.status, 200);
      const records = (data(audit).logs ?? data(audit).audit_logs ?? data(audit).items) as Json[];
      const record = records.find((r) => (r.action_type ?? r.actionType) === 'alert.acknowledged');
      assert.ok(record, JSON.stringify(data(audit)).slice(0, 500));
      assert.equal(record.actor_email ?? record.actorEmail, 'admin@example.test');
    });
  });
}
