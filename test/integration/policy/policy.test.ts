// The MCP policy through HTTP, on every driver (docs/policy.md): versions saved, read, listed, restored, each change
// in the audit chain with who and why; validate, diff and the dry run over stored events; the signed device route
// with its ETag (304 when unchanged) and the admin's view of which version each device holds. Every response is
// checked against the OpenAPI document.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { DeviceIdentity } from '#agent/identity.ts';
import { verifyAuditChain } from '#shared/audit/audit.ts';
import { driversUnderTest } from '#test/support/databases.ts';
import { enrolledDevice, invocationEvent, prepare, send } from '#test/support/device-requests.ts';
import { startTestService, type TestService } from '#test/support/service.ts';

const POLICY = {
  rules: [
    {
      id: 'no-pastebin',
      effect: 'deny',
      match: { server: 'pastebin-*' },
      reason: 'Uploading to paste sites is not allowed.',
    },
    {
      id: 'postgres-data-team',
      effect: 'allow',
      match: { server: 'postgres', group: 'data' },
      reason: 'The data team uses postgres.',
    },
    {
      id: 'postgres-others',
      effect: 'deny',
      match: { server: 'postgres' },
      reason: 'postgres is for the data team only.',
    },
    {
      id: 'watch-writes',
      effect: 'deny',
      mode: 'audit',
      match: { tool: 'write_*' },
      reason: 'Writes will be refused soon.',
    },
  ],
  default: { effect: 'allow', reason: 'Not covered by a rule.' },
  no_cache: 'open',
};

type Json = Record<string, unknown>;
const data = (res: { body: Json }) => res.body.data as Json;

for (const driver of driversUnderTest()) {
  describe(`MCP policy on ${driver}`, () => {
    let svc: TestService;
    let admin: string;
    let device: DeviceIdentity;

    const fetchPolicy = async (identity: DeviceIdentity, etag?: string) => {
      const request = prepare('/v1/devices/policy', identity, {});
      const res = await fetch(`${svc.url}${request.path}`, {
        method: 'POST',
        headers: { ...request.headers, ...(etag ? { 'if-none-match': etag } : {}) },
        body: request.body,
      });
      const text = await res.text();
      return {
        status: res.status,
        etag: res.headers.get('etag'),
        body: (text ? JSON.parse(text) : {}) as Json,
      };
    };

    before(async () => {
      svc = await startTestService(driver, { dashboard_url: 'http://dashboard.test' });
      admin = await svc.adminToken();
      device = await enrolledDevice(svc.url, admin);
    });
    after(async () => svc?.dispose());

    test('before any save: version 0, the built-in allow-all, fail open; a device gets it too', async () => {
      const res = await svc.call('GET', '/v1/admin/policy', { token: admin });
      assert.equal(res.status, 200);
      assert.equal(data(res).version, 0);
      assert.deepEqual((data(res).policy as Json).rules, []);
      assert.equal((data(res).policy as Json).no_cache, 'open');
      const fetched = await fetchPolicy(device);
      assert.equal(fetched.status, 200);
      assert.equal(fetched.body.version, 0);
      assert.equal(fetched.etag, data(res).etag);
    });

    test('bad documents are 400 naming the field and store nothing; validate lists problems and warnings', async () => {
      const bad = await svc.call('PUT', '/v1/admin/policy', {
        token: admin,
        body: { reason: 'x', policy: { ...POLICY, rules: [{ ...POLICY.rules[0], effect: 'maybe' }] } },
      });
      assert.equal(bad.status, 400);
      assert.match(String(bad.body.message), /policy\.rules\[0\]\.effect/);
      const dup = await svc.call('PUT', '/v1/admin/policy', {
        token: admin,
        body: { reason: 'x', policy: { ...POLICY, rules: [POLICY.rules[0], POLICY.rules[0]] } },
      });
      assert.equal(dup.status, 400);
      assert.match(String(dup.body.message), /rules\[1\]\.id/);
      const noReason = await svc.call('PUT', '/v1/admin/policy', { token: admin, body: { policy: POLICY } });
      assert.equal(noReason.status, 400);
      assert.match(String(noReason.body.message), /reason/);
      assert.equal(data(await svc.call('GET', '/v1/admin/policy', { token: admin })).version, 0);

      const invalid = await svc.call('POST', '/v1/admin/policy/validate', {
        token: admin,
        body: { policy: { rules: [{ id: 'a b', effect: 'deny', reason: 'r' }], no_cache: 'open' } },
      });
      assert.equal(invalid.status, 200);
      assert.equal(data(invalid).valid, false);
      const paths = (data(invalid).problems as Array<{ path: string }>).map((p) => p.path).sort();
      assert.deepEqual(paths, ['policy.default', 'policy.rules[0].id']);

      const shadowed = await svc.call('POST', '/v1/admin/policy/validate', {
        token: admin,
        body: {
          policy: {
            ...POLICY,
            rules: [
              { id: 'all-github', effect: 'deny', match: { server: 'github' }, reason: 'no' },
              {
                id: 'github-search',
                effect: 'allow',
                match: { server: 'GitHub', tool: 'search' },
                reason: 'ok',
              },
            ],
          },
        },
      });
      assert.equal(data(shadowed).valid, true);
      const warnings = data(shadowed).warnings as Array<{ path: string; message: string }>;
      assert.equal(warnings.length, 1);
      assert.equal(warnings[0]?.path, 'policy.rules[1]');
      assert.match(warnings[0]?.message ?? '', /all-github/);
    });

    test('a save is a version with who and why, audited; saving it again changes nothing; base_version guards', async () => {
      const saved = await svc.call('PUT', '/v1/admin/policy', {
        token: admin,
        body: { reason: 'First rules', policy: POLICY, base_version: 0 },
      });
      assert.equal(saved.status, 200);
      assert.equal(data(saved).version, 1);
      assert.equal(data(saved).created_by, 'admin@example.test');
      assert.equal(data(saved).reason, 'First rules');
      const rule = ((data(saved).policy as Json).rules as Json[])[0] as Json;
      assert.equal(rule.mode, 'enforce', 'the default mode is filled in');

      const again = await svc.call('PUT', '/v1/admin/policy', {
        token: admin,
        body: { reason: 'same', policy: POLICY },
      });
      assert.equal(data(again).version, 1);

      const stale = await svc.call('PUT', '/v1/admin/policy', {
        token: admin,
        body: { reason: 'late', policy: { ...POLICY, no_cache: 'closed' }, base_version: 0 },
      });
      assert.equal(stale.status, 409);
      assert.equal(stale.body.error, 'policy_changed');

      const audit = await svc.call('GET', '/v1/admin/audit-logs?resource_type=policy', { token: admin });
      const logs = data(audit).logs as Json[];
      assert.equal(logs.length, 1);
      const log = logs[0] as Json;
      assert.equal(log.action_type, 'policy.updated');
      assert.equal(log.actor_email, 'admin@example.test');
      assert.equal((log.metadata as Json).reason, 'First rules');
      assert.deepEqual(
        (log.metadata as Json).added,
        POLICY.rules.map((r) => r.id),
      );
      assert.equal((await verifyAuditChain(svc.runtime.database.db)).intact, true);
    });

    test('the device route: 200 with ETag, 304 while unchanged, the new version after a save; the admin sees it', async () => {
      const first = await fetchPolicy(device);
      assert.equal(first.status, 200);
      assert.equal(first.body.version, 1);
      assert.ok(first.etag);
      assert.equal(first.body.etag, first.etag);
      const unchanged = await fetchPolicy(device, first.etag as string);
      assert.equal(unchanged.status, 304);
      assert.deepEqual(unchanged.body, {});
      assert.equal(unchanged.etag, first.etag);
      // The tag inside the signed body works as the header does.
      const inBody = await send(svc.url, prepare('/v1/devices/policy', device, { etag: first.etag }));
      assert.equal(inBody.status, 304);

      const other = await enrolledDevice(svc.url, admin);
      const list = async (query = '') =>
        data(await svc.call('GET', `/v1/admin/policy/devices${query}`, { token: admin }));
      const before2 = await list();
      assert.equal(before2.current_version, 1);
      const rows = before2.devices as Json[];
      assert.equal(rows.length, 2);
      assert.equal(rows[0]?.version, 1, 'the device that fetched, newest fetch first');
      assert.equal(rows[0]?.current, true);
      assert.equal(rows[1]?.version, null, 'the other one never fetched');
      // One device, as its page in the console asks.
      const one = await list(`?device_id=${rows[1]?.device_id}`);
      assert.deepEqual(
        [one.total, (one.devices as Json[]).map((d) => [d.device_id, d.version])],
        [1, [[rows[1]?.device_id, null]]],
      );
      const bad = await svc.call('GET', '/v1/admin/policy/devices?device_id=nope', { token: admin });
      assert.deepEqual([bad.status, bad.body.error], [400, 'validation_failed']);
      assert.match(String(bad.body.message), /device_id/);

      const changed = await svc.call('PUT', '/v1/admin/policy', {
        token: admin,
        body: { reason: 'Close on no cache', policy: { ...POLICY, no_cache: 'closed' }, base_version: 1 },
      });
      assert.equal(data(changed).version, 2);
      const next = await fetchPolicy(device, first.etag as string);
      assert.equal(next.status, 200);
      assert.equal(next.body.version, 2);
      assert.notEqual(next.etag, first.etag);
      assert.equal((next.body.policy as Json).no_cache, 'closed');

      await fetchPolicy(other);
      const stale = await list('?stale=true');
      assert.equal(stale.total, 0);
      assert.equal(
        ((await list()).devices as Json[]).every((d) => d.version === 2),
        true,
      );
    });

    test('a device route request is signed: replayed, unsigned or unknown is 401', async () => {
      const request = prepare('/v1/devices/policy', device, {});
      assert.equal((await send(svc.url, request)).status, 200);
      const replay = await send(svc.url, request);
      assert.equal(replay.status, 401);
      assert.equal(replay.body.error, 'replayed_request');
      const unsigned = await svc.call('POST', '/v1/devices/policy', { body: JSON.parse(request.body) });
      assert.equal(unsigned.status, 401);
      const { createDeviceIdentity } = await import('#agent/identity.ts');
      const stranger = await send(
        svc.url,
        prepare('/v1/devices/policy', await createDeviceIdentity('p256'), {}),
      );
      assert.equal(stranger.status, 401);
      assert.equal(stranger.body.error, 'unknown_device');
    });

    test('versions list, one version, diff, restore (audited, a new version)', async () => {
      const versions = data(await svc.call('GET', '/v1/admin/policy/versions', { token: admin }));
      assert.equal(versions.total, 2);
      assert.deepEqual(
        (versions.versions as Json[]).map((v) => [v.version, v.rules]),
        [
          [2, 4],
          [1, 4],
        ],
      );
      const one = await svc.call('GET', '/v1/admin/policy/versions/1', { token: admin });
      assert.equal((data(one).policy as Json).no_cache, 'open');
      assert.equal((await svc.call('GET', '/v1/admin/policy/versions/9', { token: admin })).status, 404);

      const diff = data(
        await svc.call('POST', '/v1/admin/policy/diff', { token: admin, body: { from: 1, to: 2 } }),
      );
      assert.equal(diff.same, false);
      assert.deepEqual(diff.rules, []);
      assert.deepEqual(diff.settings, [{ field: 'no_cache', before: 'open', after: 'closed' }]);

      const draft = {
        ...POLICY,
        rules: [
          POLICY.rules[2],
          { ...(POLICY.rules[0] as Json), reason: 'Changed.' },
          { id: 'new-one', effect: 'deny', match: { tool: 'rm' }, reason: 'r' },
        ],
      };
      const draftDiff = data(
        await svc.call('POST', '/v1/admin/policy/diff', { token: admin, body: { policy: draft } }),
      );
      assert.equal(draftDiff.from, 2);
      assert.equal(draftDiff.to, null);
      const changes = Object.fromEntries(
        (draftDiff.rules as Json[]).map((r) => [r.id, [r.change, r.fields]]),
      );
      assert.deepEqual(changes, {
        'postgres-data-team': ['removed', []],
        'watch-writes': ['removed', []],
        'no-pastebin': ['changed', ['reason']],
        'postgres-others': ['moved', []],
        'new-one': ['added', []],
      });
      const both = await svc.call('POST', '/v1/admin/policy/diff', {
        token: admin,
        body: { to: 1, policy: draft },
      });
      assert.equal(both.status, 400);

      const restored = await svc.call('POST', '/v1/admin/policy/versions/1/restore', {
        token: admin,
        body: { reason: 'Back to open' },
      });
      assert.equal(restored.status, 200);
      assert.equal(data(restored).version, 3);
      assert.equal(data(restored).restored_from, 1);
      assert.equal((data(restored).policy as Json).no_cache, 'open');
      assert.equal(
        (
          await svc.call('POST', '/v1/admin/policy/versions/7/restore', {
            token: admin,
            body: { reason: 'x' },
          })
        ).status,
        404,
      );
      const audit = data(
        await svc.call('GET', '/v1/admin/audit-logs?resource_type=policy', { token: admin }),
      );
      const newest = (audit.logs as Json[])[0] as Json;
      assert.equal(newest.action_type, 'policy.restored');
      assert.equal((newest.metadata as Json).restored_from, 1);
      assert.deepEqual((newest.metadata as Json).settings, ['no_cache']);
    });

    test('the dry run counts the stored calls of the window per rule, audit matches and the default', async () => {
      const old = new Date(Date.now() - 10 * 86_400_000).toISOString();
      const events = [
        invocationEvent({ mcp_name: 'pastebin-uploader', tool: 'upload' }),
        invocationEvent({ mcp_name: 'Pastebin-X', tool: 'upload' }),
        invocationEvent({ mcp_name: 'postgres', tool: 'query', group: 'data' }),
        invocationEvent({ mcp_name: 'postgres', tool: 'write_rows', group: 'sales' }),
        invocationEvent({ mcp_name: 'github', tool: 'write_file' }),
        invocationEvent({ mcp_name: 'github', tool: 'search_code' }),
        invocationEvent({ mcp_name: 'pastebin-uploader', tool: 'upload', event_time: old }),
      ];
      const stored = await send(svc.url, prepare('/v1/devices/events', device, { events }));
      assert.equal(stored.status, 200);
      const run = data(
        await svc.call('POST', '/v1/admin/policy/dry-run', { token: admin, body: { policy: POLICY } }),
      );
      assert.equal(run.calls, 6, 'the event older than 7 days is outside the window');
      assert.deepEqual(
        (run.rules as Json[]).map((r) => [r.id, r.matched]),
        [
          ['no-pastebin', 2],
          ['postgres-data-team', 1],
          ['postgres-others', 1],
          ['watch-writes', 1],
        ],
      );
      assert.deepEqual(run.default, { effect: 'allow', matched: 2 });
      assert.equal(run.denied, 3);
      assert.equal(run.allowed, 3);
      assert.equal(run.would_deny, 1);

      const wider = data(
        await svc.call('POST', '/v1/admin/policy/dry-run', {
          token: admin,
          body: {
            days: 30,
            policy: { ...POLICY, default: { effect: 'deny', reason: 'Only named servers.' } },
          },
        }),
      );
      assert.equal(wider.calls, 7);
      assert.deepEqual(wider.default, { effect: 'deny', matched: 2 });
      assert.equal(wider.denied, 6);
      const current = data(await svc.call('POST', '/v1/admin/policy/dry-run', { token: admin, body: {} }));
      assert.equal(current.calls, 6);
      assert.equal(
        (await svc.call('POST', '/v1/admin/policy/dry-run', { token: admin, body: { days: 0 } })).status,
        400,
      );
    });

    test('the admin routes are for admins', async () => {
      const anonymous = await svc.call('GET', '/v1/admin/policy');
      assert.equal(anonymous.status, 401);
    });
  });
}
