// The device wire contract (../shared/docs/device-protocol.md), tested from its text on every driver.
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { SignJWT } from 'jose';
import { refusedEventIndices } from '#agent/client.ts';
import { createDeviceIdentity } from '#agent/identity.ts';
import { login } from '#agent/login.ts';
import { col, queryRows } from '#shared/core/db/query.ts';
import { setLogLevel, setLogSink } from '#shared/core/logger.ts';
import { oldestAcceptedEventTime } from '#shared/observability/retention.ts';
import { driversUnderTest, provisionDatabase } from '#test/support/databases.ts';
import {
  expiredIdentity,
  hardware,
  independentFingerprint,
  invocationEvent,
  issuedIdentity,
  p384Identity,
  prepare,
  rawSign,
  send,
} from '#test/support/device-requests.ts';
import { loginToken, spawnServiceProcess, startOnDatabase } from '#test/support/device-service.ts';
import { startTestService, TEST_JWT_SECRET, type TestService } from '#test/support/service.ts';

const DASHBOARD = 'http://dashboard.test';

for (const driver of driversUnderTest()) {
  describe(`device protocol on ${driver}`, () => {
    let svc: TestService;
    let token: string;
    const count = async (table: string) => {
      const [row] = await queryRows(
        svc.runtime.database.db,
        sql.raw(`SELECT count(*)::int AS n FROM ${table}`),
      );
      return Number(row?.n);
    };
    const counts = async () => ({
      devices: await count('devices'),
      certificates: await count('device_certificates'),
      signatures: await count('device_signatures'),
      events: await count('observability_events'),
      agents: await count('inventory_agents'),
      audit: await count('audit_logs'),
    });
    const enroll = async (keyType: 'p256' | 'ed25519' = 'p256', serial?: string) => {
      const identity = await createDeviceIdentity(keyType);
      const res = await send(svc.url, prepare('/v1/devices/register', identity, hardware(serial), { token }));
      assert.equal(res.status, 201, JSON.stringify(res.body));
      return { identity, deviceId: res.body.deviceId as string };
    };
    const event = (over: Record<string, unknown> = {}) =>
      invocationEvent({ tokens_in: 120, tokens_out: 30, duration_ms: 45, ...over });

    before(async () => {
      svc = await startTestService(driver, {
        dashboard_url: DASHBOARD,
        events: { max_batch: 50, prompt_max_chars: 16 },
      });
      token = await svc.adminToken();
    });
    after(async () => svc?.dispose());

    test('register: 201 with the fingerprint of the DER, owner = token subject; same certificate again is 200, same id', async () => {
      for (const keyType of ['p256', 'ed25519'] as const) {
        const identity = await createDeviceIdentity(keyType);
        const first = await send(svc.url, prepare('/v1/devices/register', identity, hardware(), { token }));
        assert.equal(first.status, 201);
        assert.equal(first.body.certificateFingerprint, independentFingerprint(identity.certificatePem));
        assert.match(String(first.body.certificateFingerprint), /^[0-9a-f]{64}$/);
        assert.equal(first.body.ownerAssigned, true);
        const again = await send(svc.url, prepare('/v1/devices/register', identity, hardware(), { token }));
        assert.equal(again.status, 200);
        assert.equal(again.body.deviceId, first.body.deviceId);
        const me = await svc.call('GET', '/v1/me', { token });
        const [row] = await queryRows(
          svc.runtime.database.db,
          sql`SELECT owner_subject, owner_email FROM devices WHERE id = ${first.body.deviceId as string}::uuid`,
        );
        assert.equal(row?.owner_subject, (me.body.data as { subject: string }).subject);
        assert.notEqual(row?.owner_email, 'someone-else@example.test', 'ownerEmail is ignored');
      }
    });

    test('register without a token, with an expired token or a forged one: 401 and no device row', async () => {
      const before = await count('devices');
      const identity = await createDeviceIdentity();
      const none = await send(svc.url, prepare('/v1/devices/register', identity, hardware()));
      assert.equal(none.status, 401);
      const past = Math.floor(Date.now() / 1000) - 7200;
      const expired = await new SignJWT({ roles: ['user'], token_use: 'cli' })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject('someone')
        .setIssuer('agent-control-plane')
        .setAudience('agent-control-plane')
        .setIssuedAt(past)
        .setExpirationTime(past + 600)
        .sign(new TextEncoder().encode(TEST_JWT_SECRET));
      const old = await send(
        svc.url,
        prepare('/v1/devices/register', identity, hardware(), { token: expired }),
      );
      assert.equal(old.status, 401);
      assert.equal(old.body.error, 'token_expired');
      const forged = await send(
        svc.url,
        prepare('/v1/devices/register', identity, hardware(), { token: `${token}x` }),
      );
      assert.equal(forged.status, 401);
      assert.equal(await count('devices'), before);
    });

    test('signatures: every base64 alphabet is accepted; tampered body and wrong key are 401 invalid_signature', async () => {
      const { identity } = await enroll();
      for (const encoding of ['std', 'unpadded', 'url'] as const) {
        const res = await send(
          svc.url,
          prepare('/v1/devices/inventory', identity, { agents: [] }, { encoding }),
        );
        assert.equal(res.status, 200, `${encoding}: ${JSON.stringify(res.body)}`);
      }
      const tampered = await send(
        svc.url,
        prepare(
          '/v1/devices/inventory',
          identity,
          { agents: [] },
          {
            tamper: (b) => {
              b.agents = [{ agentType: 'evil', displayName: '', mcps: [] }];
            },
          },
        ),
      );
      assert.deepEqual([tampered.status, tampered.body.error], [401, 'invalid_signature']);
      const other = await createDeviceIdentity();
      const wrongKey = await send(
        svc.url,
        prepare('/v1/devices/inventory', identity, { agents: [] }, { signer: other }),
      );
      assert.deepEqual([wrongKey.status, wrongKey.body.error], [401, 'invalid_signature']);
      const missing = await svc.call('POST', '/v1/devices/inventory', {
        body: { certificate: identity.certificatePem, clientTimestamp: new Date().toISOString(), agents: [] },
      });
      assert.deepEqual([missing.status, missing.body.error], [401, 'invalid_signature']);
      const surrogate = prepare('/v1/devices/inventory', identity, { agents: [] });
      surrogate.body = surrogate.body.replace('"agents":[]', '"agents":[],"note":"\\ud800"');
      const lone = await send(svc.url, surrogate);
      // Text with no canonical form (a lone surrogate) cannot have been signed as sent.
      assert.deepEqual([lone.status, lone.body.error], [401, 'invalid_signature']);
      const garbage = prepare('/v1/devices/inventory', identity, { agents: [] });
      garbage.headers['x-device-signature'] = 'not base64 at all!';
      assert.equal((await send(svc.url, garbage)).body.error, 'invalid_signature');
    });

    test('certificates: P-384 is 400 unsupported_key; expired and not self-signed are 401 invalid_certificate', async () => {
      const before = await count('devices');
      const p384 = await send(
        svc.url,
        prepare('/v1/devices/register', await p384Identity(), hardware(), { token }),
      );
      assert.deepEqual([p384.status, p384.body.error], [400, 'unsupported_key']);
      const expired = await send(
        svc.url,
        prepare('/v1/devices/register', await expiredIdentity(), hardware(), { token }),
      );
      assert.deepEqual([expired.status, expired.body.error], [401, 'invalid_certificate']);
      const issued = await send(
        svc.url,
        prepare('/v1/devices/register', await issuedIdentity(), hardware(), { token }),
      );
      assert.deepEqual([issued.status, issued.body.error], [401, 'invalid_certificate']);
      assert.equal(await count('devices'), before);
    });

    test('freshness: 6 minutes old or ahead is 401 stale_timestamp; a replayed signature is 401 replayed_request', async () => {
      const { identity } = await enroll();
      for (const offset of [-6 * 60_000, 6 * 60_000]) {
        const res = await send(
          svc.url,
          prepare(
            '/v1/devices/inventory',
            identity,
            { agents: [] },
            {
              clientTimestamp: new Date(Date.now() + offset).toISOString(),
            },
          ),
        );
        assert.deepEqual([res.status, res.body.error], [401, 'stale_timestamp']);
      }
      const within = await send(
        svc.url,
        prepare(
          '/v1/devices/inventory',
          identity,
          { agents: [] },
          { clientTimestamp: new Date(Date.now() - 4 * 60_000).toISOString() },
        ),
      );
      assert.equal(within.status, 200);
      const request = prepare('/v1/devices/events', identity, { events: [event()] });
      assert.equal((await send(svc.url, request)).status, 200);
      const replay = await send(svc.url, request);
      assert.deepEqual([replay.status, replay.body.error], [401, 'replayed_request']);
    });

    test('rotation: a new certificate for a known serial + brand keeps the id; the old one stops at once; audited', async () => {
      const serial = `ROT-${randomUUID().slice(0, 6)}`;
      const { identity: oldId, deviceId } = await enroll('p256', serial);
      const newId = await createDeviceIdentity('ed25519');
      const rotated = await send(
        svc.url,
        prepare('/v1/devices/register', newId, hardware(serial), { token }),
      );
      assert.equal(rotated.status, 200);
      assert.equal(rotated.body.deviceId, deviceId);
      assert.equal(rotated.body.certificateFingerprint, independentFingerprint(newId.certificatePem));
      const stale = await send(svc.url, prepare('/v1/devices/inventory', oldId, { agents: [] }));
      assert.deepEqual([stale.status, stale.body.error], [401, 'unknown_device']);
      const fresh = await send(svc.url, prepare('/v1/devices/inventory', newId, { agents: [] }));
      assert.equal(fresh.status, 200);
      const back = await send(svc.url, prepare('/v1/devices/register', oldId, hardware(serial), { token }));
      assert.deepEqual([back.status, back.body.error], [401, 'invalid_certificate']);
      // Nor under other hardware: the retired certificate is refused, nothing stored.
      const before = await counts();
      const elsewhere = await send(
        svc.url,
        prepare('/v1/devices/register', oldId, hardware(`OTHER-${randomUUID().slice(0, 6)}`), { token }),
      );
      assert.deepEqual([elsewhere.status, elsewhere.body.error], [401, 'invalid_certificate']);
      assert.deepEqual(await counts(), before);
      const logs = await svc.call(
        'GET',
        `/v1/admin/audit-logs?action_type=device.key_rotated&resource_id=${deviceId}`,
        { token },
      );
      assert.equal((logs.body.data as { total: number }).total, 1);
    });

    test('ownership: a device stays with its owner (409, nothing stored) until an admin releases it; then another user takes it, audited', async () => {
      const serial = `OWN-${randomUUID().slice(0, 6)}`;
      const { identity: ownersKey, deviceId } = await enroll('p256', serial);
      const email = `ana-${randomUUID().slice(0, 6)}@example.test`;
      const created = await svc.call('POST', '/v1/admin/users', {
        token,
        body: { email, name: 'Ana', password: 'a long enough password', roles: ['user'] },
      });
      assert.equal(created.status, 201, created.text);
      const ana = (
        (await svc.call('POST', '/v1/auth/login', { body: { email, password: 'a long enough password' } }))
          .body.data as { access_token: string; user: { id: string } }
      ).access_token;
      const owner = async () =>
        (
          await queryRows(
            svc.runtime.database.db,
            sql`SELECT owner_email, released_at IS NOT NULL AS released FROM devices WHERE id = ${deviceId}::uuid`,
          )
        )[0];
      const ownerBefore = await owner();

      // Another user, with a key of their own or with the device's own key: 409 naming the device, nothing stored.
      const before = await counts();
      const anasKey = await createDeviceIdentity('ed25519');
      for (const identity of [anasKey, ownersKey]) {
        const taken = await send(
          svc.url,
          prepare('/v1/devices/register', identity, hardware(serial), { token: ana }),
        );
        assert.deepEqual([taken.status, taken.body.error], [409, 'device_owned_by_another_user']);
        assert.match(String(taken.body.message), new RegExp(`${serial}.*${deviceId}.*release`));
        assert.doesNotMatch(String(taken.body.message), new RegExp(String(ownerBefore?.owner_email)));
      }
      assert.deepEqual(await counts(), before);
      assert.deepEqual(await owner(), ownerBefore);
      // The owner's key keeps working.
      assert.equal(
        (await send(svc.url, prepare('/v1/devices/inventory', ownersKey, { agents: [] }))).status,
        200,
      );

      // Only an admin releases (403 for Ana); audited once, however often it is asked.
      const release = (path: string, as = token) => svc.call('POST', path, { token: as });
      assert.equal((await release(`/v1/admin/devices/${deviceId}/release`, ana)).status, 403);
      const released = await release(`/v1/admin/devices/${deviceId}/release`);
      assert.equal(released.status, 200, released.text);
      const view = released.body.data as {
        id: string;
        serial_number: string;
        owner_email: string;
        released_at: string;
      };
      assert.deepEqual(
        [view.id, view.serial_number, view.owner_email],
        [deviceId, serial, ownerBefore?.owner_email],
      );
      const again = await release(`/admin/devices/${deviceId}/release`);
      assert.equal(again.status, 200);
      assert.equal((again.body.data as { released_at: string }).released_at, view.released_at);
      const releasedLogs = await svc.call(
        'GET',
        `/v1/admin/audit-logs?action_type=device.released&resource_id=${deviceId}`,
        { token },
      );
      const releasedRecords = (
        releasedLogs.body.data as { logs: Array<{ metadata: Record<string, unknown> }> }
      ).logs;
      assert.equal(releasedRecords.length, 1);
      assert.equal(releasedRecords[0]?.metadata.owner_email, ownerBefore?.owner_email);
      // Released, nothing else changes yet: the owner stays, and the device's key still reports.
      assert.deepEqual(await owner(), { owner_email: ownerBefore?.owner_email, released: true });
      assert.equal(
        (await send(svc.url, prepare('/v1/devices/inventory', ownersKey, { agents: [] }))).status,
        200,
      );

      // Ana's registration now takes it: same device, her key, her ownership, audited with both owners.
      const taken = await send(
        svc.url,
        prepare('/v1/devices/register', anasKey, hardware(serial), { token: ana }),
      );
      assert.equal(taken.status, 200, JSON.stringify(taken.body));
      assert.equal(taken.body.deviceId, deviceId);
      assert.deepEqual(await owner(), { owner_email: email, released: false });
      const moved = await svc.call(
        'GET',
        `/v1/admin/audit-logs?action_type=device.re_enrolled&resource_id=${deviceId}`,
        { token },
      );
      const [record] = (
        moved.body.data as { logs: Array<{ actor_email: string; metadata: Record<string, unknown> }> }
      ).logs;
      assert.equal(record?.actor_email, email);
      assert.deepEqual(
        [record?.metadata.from_owner_email, record?.metadata.to_owner_email, record?.metadata.to_fingerprint],
        [ownerBefore?.owner_email, email, independentFingerprint(anasKey.certificatePem)],
      );
      // The old key stopped with the rotation; and the first owner is now the other user.
      assert.equal(
        (await send(svc.url, prepare('/v1/devices/inventory', ownersKey, { agents: [] }))).status,
        401,
      );
      const back = await send(
        svc.url,
        prepare('/v1/devices/register', await createDeviceIdentity(), hardware(serial), { token }),
      );
      assert.deepEqual([back.status, back.body.error], [409, 'device_owned_by_another_user']);

      // Unknown or malformed ids.
      const unknown = await release(`/v1/admin/devices/${randomUUID()}/release`);
      assert.deepEqual([unknown.status, unknown.body.error], [404, 'not_found']);
      assert.equal((await release('/v1/admin/devices/not-a-uuid/release')).status, 400);
    });

    test('unknown certificate: 401 unknown_device, nothing stored', async () => {
      const before = await counts();
      const stranger = await createDeviceIdentity();
      const res = await send(svc.url, prepare('/v1/devices/events', stranger, { events: [event()] }));
      assert.deepEqual([res.status, res.body.error], [401, 'unknown_device']);
      const inv = await send(svc.url, prepare('/v1/devices/inventory', stranger, { agents: [] }));
      assert.deepEqual([inv.status, inv.body.error], [401, 'unknown_device']);
      assert.deepEqual(await counts(), before);
    });

    test('order: the signature and the enrollment are checked before the body; the batch bound before each event', async () => {
      const { identity } = await enroll();
      const before = await counts();
      const bogus = { events: [{ bogus: true }] };
      // Not signed at all, with a body that would not validate: 401, not the validation details.
      const unsigned = await svc.call('POST', '/v1/devices/events', {
        body: { ...bogus, certificate: identity.certificatePem, clientTimestamp: new Date().toISOString() },
      });
      assert.deepEqual([unsigned.status, unsigned.body.error], [401, 'invalid_signature']);
      const other = await createDeviceIdentity();
      const wrongKey = await send(svc.url, prepare('/v1/devices/events', identity, bogus, { signer: other }));
      assert.deepEqual([wrongKey.status, wrongKey.body.error], [401, 'invalid_signature']);
      const badInventory = await send(
        svc.url,
        prepare('/v1/devices/inventory', identity, { agents: 'nope' }, { signer: other }),
      );
      assert.deepEqual([badInventory.status, badInventory.body.error], [401, 'invalid_signature']);
      const badTime = await send(
        svc.url,
        prepare('/v1/devices/events', identity, bogus, { signer: other, clientTimestamp: 'yesterday' }),
      );
      assert.deepEqual([badTime.status, badTime.body.error], [401, 'invalid_signature']);
      const signedBadTime = await send(
        svc.url,
        prepare('/v1/devices/events', identity, { events: [event()] }, { clientTimestamp: 'yesterday' }),
      );
      assert.deepEqual([signedBadTime.status, signedBadTime.body.error], [400, 'validation_failed']);
      const stranger = await send(svc.url, prepare('/v1/devices/events', other, bogus));
      assert.deepEqual([stranger.status, stranger.body.error], [401, 'unknown_device']);
      const strangerTooMany = await send(
        svc.url,
        prepare('/v1/devices/events', other, { events: Array.from({ length: 51 }, () => event()) }),
      );
      assert.deepEqual([strangerTooMany.status, strangerTooMany.body.error], [401, 'unknown_device']);
      const strangerInventory = await send(
        svc.url,
        prepare('/v1/devices/inventory', other, { agents: 'nope' }),
      );
      assert.deepEqual([strangerInventory.status, strangerInventory.body.error], [401, 'unknown_device']);
      const register = await svc.call('POST', '/v1/devices/register', {
        token,
        body: { certificate: identity.certificatePem, clientTimestamp: new Date().toISOString() },
      });
      assert.deepEqual([register.status, register.body.error], [401, 'invalid_signature']);
      // Signed and enrolled, one event more than events.max_batch (50 here) and one of them invalid: 413.
      const many = Array.from({ length: 51 }, () => event());
      many[7] = event({ result: 'denied' });
      const tooMany = await send(svc.url, prepare('/v1/devices/events', identity, { events: many }));
      assert.deepEqual([tooMany.status, tooMany.body.error], [413, 'batch_too_large']);
      // Signed, enrolled, within the bound: now the body is validated.
      const invalid = await send(svc.url, prepare('/v1/devices/events', identity, bogus));
      assert.deepEqual([invalid.status, invalid.body.error], [400, 'validation_failed']);
      assert.deepEqual(await counts(), before);
    });

    test('wire forms: canonical bytes, another key order, pretty-printed: all verify; forbidden keys are 400', async () => {
      const { identity, deviceId } = await enroll();
      for (const wire of ['canonical', 'json', 'pretty'] as const) {
        const res = await send(
          svc.url,
          prepare('/v1/devices/events', identity, { events: [event()] }, { wire }),
        );
        assert.equal(res.status, 200, `${wire}: ${JSON.stringify(res.body)}`);
        assert.equal(res.body.accepted, 1);
      }
      // A signature over the exact bytes sent, although they are not the canonical form: accepted (the
      // verification fast path; see docs/design/devices.md).
      const body = {
        events: [event()],
        certificate: identity.certificatePem,
        clientTimestamp: new Date().toISOString(),
      };
      const text = JSON.stringify(body, null, 1);
      const exact = await send(svc.url, {
        path: '/v1/devices/events',
        headers: {
          'content-type': 'application/json',
          'x-device-signature': rawSign(identity, Buffer.from(text, 'utf8')),
        },
        body: text,
      });
      assert.equal(exact.status, 200, JSON.stringify(exact.body));
      // A word that could be a forbidden key, as a value: parsed and stored.
      const word = await send(
        svc.url,
        prepare('/v1/devices/events', identity, { events: [event({ prompt: 'add a constructor' })] }),
      );
      assert.equal(word.status, 200);
      const before = await counts();
      for (const key of ['__proto__', '\\u005f_proto__']) {
        const request = prepare('/v1/devices/events', identity, { events: [event()] }, { wire: 'canonical' });
        request.body = request.body.replace('"events":[{', `"events":[{"${key}":{"x":1},`);
        const res = await send(svc.url, request);
        assert.deepEqual([res.status, res.body.error], [400, 'invalid_json'], key);
      }
      assert.deepEqual(await counts(), before);
      const [stored] = await queryRows(
        svc.runtime.database.db,
        sql`SELECT count(*)::int AS n FROM observability_events WHERE device_id = ${deviceId}::uuid`,
      );
      assert.equal(stored?.n, 5);
    });

    test('inventory: replaces the snapshot, keeps first seen, records changes; MCP command/args/env never stored or logged', async () => {
      const { identity, deviceId } = await enroll();
      const lines: string[] = [];
      const prev = setLogSink((l) => lines.push(l));
      // Everything the service logs, not only the warnings test services keep.
      const prevLevel = setLogLevel('debug');
      const secretMcp = {
        name: 'github',
        enabled: true,
        transport: 'stdio',
        command: 'npx-secret-command',
        args: ['--token', 'ghp_SECRETSECRET'],
        env: { GITHUB_TOKEN: 'ghp_ENVSECRET' },
      };
      const first = await send(
        svc.url,
        prepare('/v1/devices/inventory', identity, {
          agents: [
            {
              agentType: 'claude-code',
              displayName: 'Claude Code',
              mcps: [secretMcp, { name: 'fs', enabled: false, transport: 'stdio' }],
            },
            { agentType: 'cursor', displayName: 'Cursor', mcps: [] },
          ],
        }),
      );
      setLogSink(prev);
      setLogLevel(prevLevel);
      assert.ok(
        lines.some((l) => l.includes('/v1/devices/inventory')),
        'the request was logged (so the lines below are what a deployed function writes)',
      );
      assert.equal(first.status, 200);
      assert.deepEqual(
        {
          success: first.body.success,
          deviceId: first.body.deviceId,
          agentsIn: first.body.agentsIn,
          mcpsIn: first.body.mcpsIn,
        },
        { success: true, deviceId, agentsIn: 2, mcpsIn: 2 },
      );
      assert.ok(!Number.isNaN(Date.parse(String(first.body.receivedAt))));
      const dump = await queryRows(
        svc.runtime.database.db,
        sql`SELECT (SELECT coalesce(json_agg(m), '[]')::text FROM inventory_mcps m) || (SELECT coalesce(json_agg(a), '[]')::text FROM inventory_agents a) || (SELECT coalesce(json_agg(l), '[]')::text FROM audit_logs l) AS t`,
        { t: col.text },
      );
      for (const secret of ['npx-secret-command', 'ghp_SECRETSECRET', 'ghp_ENVSECRET']) {
        assert.equal(dump[0]?.t.includes(secret), false, `${secret} stored`);
        assert.equal(lines.join('\n').includes(secret), false, `${secret} logged`);
      }
      const [seen] = await queryRows(
        svc.runtime.database.db,
        sql`SELECT first_seen_at::text AS first FROM inventory_mcps WHERE device_id = ${deviceId}::uuid AND name = 'github'`,
      );
      await new Promise((r) => setTimeout(r, 20));
      const second = await send(
        svc.url,
        prepare('/v1/devices/inventory', identity, {
          agents: [
            {
              agentType: 'claude-code',
              displayName: 'Claude Code',
              mcps: [{ name: 'github', enabled: false, transport: 'http' }],
            },
          ],
        }),
      );
      assert.equal(second.status, 200);
      const rows = await queryRows(
        svc.runtime.database.db,
        sql`SELECT name, enabled, transport, removed_at IS NOT NULL AS removed, first_seen_at::text AS first,
                   last_seen_at > first_seen_at AS moved
            FROM inventory_mcps WHERE device_id = ${deviceId}::uuid ORDER BY name`,
      );
      assert.deepEqual(
        rows.map((r) => [r.name, r.enabled, r.transport, r.removed]),
        [
          ['fs', false, 'stdio', true],
          ['github', false, 'http', false],
        ],
      );
      assert.equal(rows[1]?.first, seen?.first, 'first seen kept');
      assert.equal(rows[1]?.moved, true, 'last seen moved');
      const changes = await queryRows(
        svc.runtime.database.db,
        sql`SELECT kind, agent_type, mcp_name FROM inventory_changes WHERE device_id = ${deviceId}::uuid ORDER BY id`,
      );
      assert.deepEqual(changes.map((c) => `${c.kind}:${c.agent_type}:${c.mcp_name ?? ''}`).sort(), [
        'agent_appeared:claude-code:',
        'agent_appeared:cursor:',
        'agent_disappeared:cursor:',
        'mcp_appeared:claude-code:fs',
        'mcp_appeared:claude-code:github',
        'mcp_disappeared:claude-code:fs',
      ]);
      const alias = await send(svc.url, prepare('/devices/inventory', identity, { agents: [] }));
      assert.equal(alias.status, 200);
      const bad = await send(
        svc.url,
        prepare('/v1/devices/inventory', identity, {
          agents: [
            { agentType: 'x', displayName: '', mcps: [{ name: 'a', enabled: true, transport: 'ftp' }] },
          ],
        }),
      );
      assert.equal(bad.status, 400);
      assert.match(String(bad.body.message), /agents\[0\]\.mcps\[0\]\.transport/);
    });

    test('events: stored with server stamps; duplicates by event_id; prompt truncated and marked; last seen updated', async () => {
      const { identity, deviceId } = await enroll();
      // A retry resends the event as it was: its id and its time (the dedup key is the pair, see docs/design/devices.md).
      const dup = randomUUID();
      const dupTime = new Date().toISOString();
      const batch = [
        event({
          event_id: dup,
          event_time: dupTime,
          prompt: 'a prompt that is longer than sixteen characters',
        }),
        event({
          result: 'denied',
          deny_code: 'path_outside_workspace',
          deny_reason: 'no',
          rule_applied: 'fs.ws',
        }),
        event({ result: 'error', event_type: 'error', error_message: 'boom', event_id: undefined }),
        event({ event_id: dup, event_time: dupTime }),
      ];
      const res = await send(svc.url, prepare('/v1/devices/events', identity, { events: batch }));
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(
        [res.body.success, res.body.deviceId, res.body.accepted, res.body.duplicates],
        [true, deviceId, 3, 1],
      );
      const again = await send(
        svc.url,
        prepare('/v1/devices/events', identity, {
          events: [event({ event_id: dup, event_time: dupTime })],
        }),
      );
      assert.deepEqual([again.body.accepted, again.body.duplicates], [0, 1]);
      const stored = await queryRows(
        svc.runtime.database.db,
        sql`SELECT serial_number, source_ip, prompt, prompt_truncated, received_at IS NOT NULL AS received
            FROM observability_events WHERE device_id = ${deviceId}::uuid ORDER BY id`,
        {
          serial_number: col.text,
          source_ip: col.text,
          prompt: col.nullable(col.text),
          prompt_truncated: col.bool,
          received: col.bool,
        },
      );
      assert.equal(stored.length, 3);
      assert.equal(stored[0]?.prompt, 'a prompt that is');
      assert.equal(stored[0]?.prompt_truncated, true);
      assert.equal(stored[1]?.prompt_truncated, false);
      assert.ok(
        stored.every((s) => s.source_ip === '127.0.0.1' && s.received && s.serial_number.startsWith('SN-')),
      );
      const [dev] = await queryRows(
        svc.runtime.database.db,
        sql`SELECT last_seen_at IS NOT NULL AND last_event_at IS NOT NULL AS seen FROM devices WHERE id = ${deviceId}::uuid`,
      );
      assert.equal(dev?.seen, true);
    });

    test('events: deny_reason and error_message past their limits are truncated (code points), not refused', async () => {
      const { identity, deviceId } = await enroll();
      // 4,001 characters of which the last is outside the BMP: a cut by UTF-16 units would split it.
      const trace = `${'x'.repeat(3999)}😀😀`;
      const reason = 'ü'.repeat(2500);
      const res = await send(
        svc.url,
        prepare('/v1/devices/events', identity, {
          events: [
            event({ result: 'error', event_type: 'error', error_message: trace }),
            event({ result: 'denied', deny_code: 'c', deny_reason: reason, rule_applied: 'r' }),
          ],
        }),
      );
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.accepted, 2);
      const stored = await queryRows(
        svc.runtime.database.db,
        sql`SELECT error_message, deny_reason FROM observability_events WHERE device_id = ${deviceId}::uuid ORDER BY id`,
      );
      assert.equal(stored[0]?.error_message, `${'x'.repeat(3999)}😀`);
      assert.equal(stored[1]?.deny_reason, 'ü'.repeat(2000));
    });

    test('events: one bad event rejects the batch (400 naming its index); too many or too large is 413; nothing stored', async () => {
      const { identity } = await enroll();
      const before = await count('observability_events');
      const bad = await send(
        svc.url,
        prepare('/v1/devices/events', identity, { events: [event(), event(), event({ result: 'denied' })] }),
      );
      assert.equal(bad.status, 400);
      assert.equal(bad.body.error, 'validation_failed');
      assert.match(String(bad.body.message), /events\[2\]\.deny_code/);
      const many = await send(
        svc.url,
        prepare('/v1/devices/events', identity, { events: Array.from({ length: 51 }, () => event()) }),
      );
      assert.deepEqual([many.status, many.body.error], [413, 'batch_too_large']);
      const huge = await send(
        svc.url,
        prepare('/v1/devices/events', identity, {
          events: [event({ metadata: { blob: 'x'.repeat(1024 * 1024) } })],
        }),
      );
      assert.deepEqual([huge.status, huge.body.error], [413, 'batch_too_large']);
      const empty = await send(svc.url, prepare('/v1/devices/events', identity, { events: [] }));
      assert.equal(empty.status, 400);
      assert.equal(await count('observability_events'), before);
    });

    test('events: one older than the retention window is 400 event_too_old naming its event_time, as the agent reads it; nothing stored', async () => {
      const { identity } = await enroll();
      const before = await counts();
      const start = oldestAcceptedEventTime(svc.runtime.config);
      const at = (ms: number) => new Date(ms).toISOString();
      const batch = [
        event({ event_time: at(Date.now()) }),
        event({ event_time: at(start.getTime() - 1) }),
        event({ event_time: at(start.getTime() + 1000) }),
        event({ event_time: '2001-02-03T04:05:06Z' }),
      ];
      const refused = await send(svc.url, prepare('/v1/devices/events', identity, { events: batch }));
      assert.deepEqual([refused.status, refused.body.error], [400, 'event_too_old']);
      const message = String(refused.body.message);
      assert.match(message, /^body\.events\[1\]\.event_time: /, 'names the first such field');
      assert.match(message, /2 of 4 events are before it/);
      // What the reference agent reads from it: the event to drop, and where the window starts.
      assert.deepEqual(refusedEventIndices(message), [1]);
      assert.equal(/starts at (\d{4}-\d\d-\d\dT[\d:.]+Z)/.exec(message)?.[1], start.toISOString());
      assert.deepEqual(await counts(), before, 'nothing stored');
      // The batch without them; the window's first instant is inside it.
      const rest = [batch[0], batch[2], event({ event_time: at(start.getTime()) })];
      const ok = await send(svc.url, prepare('/v1/devices/events', identity, { events: rest }));
      assert.deepEqual([ok.status, ok.body.accepted], [200, 3], JSON.stringify(ok.body));
      // A certificate no device has learns nothing of its body: 401 first.
      const stranger = await createDeviceIdentity();
      const unknown = await send(svc.url, prepare('/v1/devices/events', stranger, { events: [batch[3]] }));
      assert.deepEqual([unknown.status, unknown.body.error], [401, 'unknown_device']);
    });

    test('CLI sign-in over HTTP: loopback only, PKCE S256, one-time code; the token registers and does nothing else', async () => {
      const verifier = randomUUID() + randomUUID();
      const { createHash } = await import('node:crypto');
      const challenge = createHash('sha256').update(verifier).digest('base64url');
      const redirect = 'http://127.0.0.1:43123/callback';
      const q = (params: Record<string, string>) => `/v1/auth/cli/authorize?${new URLSearchParams(params)}`;
      const base = {
        redirect_uri: redirect,
        state: 'st-1',
        code_challenge: challenge,
        client_id: 'acp-agent-cli',
        code_challenge_method: 'S256',
      };
      for (const uri of ['https://evil.test/cb', 'http://evil.test:8080/cb', 'http://10.0.0.1:80/cb']) {
        const res = await fetch(`${svc.url}${q({ ...base, redirect_uri: uri })}`, { redirect: 'manual' });
        assert.equal(res.status, 400, uri);
      }
      const plain = await fetch(`${svc.url}${q({ ...base, code_challenge_method: 'plain' })}`, {
        redirect: 'manual',
      });
      assert.equal(plain.status, 400);
      const start = await fetch(`${svc.url}${q(base)}`, { redirect: 'manual' });
      assert.equal(start.status, 302);
      const login = new URL(start.headers.get('location') as string);
      assert.equal(`${login.origin}${login.pathname}`, `${DASHBOARD}/cli/login`);
      const requestId = login.searchParams.get('request') as string;
      const approve = await svc.call('POST', '/v1/auth/cli/approve', { token, body: { request: requestId } });
      assert.equal(approve.status, 200);
      const back = new URL((approve.body.data as { redirect_to: string }).redirect_to);
      assert.equal(`${back.origin}${back.pathname}`, redirect);
      assert.equal(back.searchParams.get('state'), 'st-1');
      const code = back.searchParams.get('code') as string;
      const twice = await svc.call('POST', '/v1/auth/cli/approve', { token, body: { request: requestId } });
      assert.equal(twice.status, 409);
      const wrong = await svc.call('POST', '/v1/auth/cli/token', {
        body: { code, code_verifier: `${verifier}x`, redirect_uri: redirect },
      });
      assert.deepEqual([wrong.status, wrong.body.error], [400, 'invalid_grant']);
      // The failed exchange burned the code: start again, as an agent would.
      const start2 = await fetch(`${svc.url}${q(base)}`, { redirect: 'manual' });
      const id2 = new URL(start2.headers.get('location') as string).searchParams.get('request') as string;
      const code2 = new URL(
        (
          (await svc.call('POST', '/v1/auth/cli/approve', { token, body: { request: id2 } })).body.data as {
            redirect_to: string;
          }
        ).redirect_to,
      ).searchParams.get('code') as string;
      const exchanged = await svc.call('POST', '/v1/auth/cli/token', {
        body: { code: code2, code_verifier: verifier, redirect_uri: redirect },
      });
      assert.equal(exchanged.status, 200);
      assert.equal(exchanged.body.token_type, 'Bearer');
      const cliToken = exchanged.body.access_token as string;
      const reuse = await svc.call('POST', '/v1/auth/cli/token', {
        body: { code: code2, code_verifier: verifier, redirect_uri: redirect },
      });
      assert.equal(reuse.status, 400);
      const identity = await createDeviceIdentity();
      const reg = await send(
        svc.url,
        prepare('/v1/devices/register', identity, hardware(), { token: cliToken }),
      );
      assert.equal(reg.status, 201);
      // Anywhere else the enrollment token is no credential: 401 invalid_token (sign in for a session token).
      for (const [method, path] of [
        ['GET', '/v1/admin/users'],
        ['GET', '/v1/me'],
        ['POST', '/v1/auth/cli/approve'],
        ['POST', '/v1/auth/cli/refuse'],
        ['GET', `/v1/auth/cli/requests/${id2}`],
      ] as const) {
        const body = method === 'POST' ? { request: id2 } : undefined;
        const res = await svc.call(method, path, { token: cliToken, body });
        assert.deepEqual([res.status, res.body.error], [401, 'invalid_token'], path);
        assert.match(String(res.body.message), /only enrolls a device/);
        assert.equal(res.headers.get('www-authenticate'), 'Bearer');
      }
    });

    test('agent login prints the URL even when a browser opens, and ends with a token that registers', async () => {
      const printed: string[] = [];
      let opened = '';
      const done = login({
        baseUrl: svc.url,
        print: (line) => printed.push(line),
        openBrowser: async (url) => {
          opened = url;
          return true;
        },
        timeoutMs: 20_000,
      });
      while (!opened) await new Promise((r) => setTimeout(r, 10));
      assert.ok(printed.join('\n').includes(opened), `the URL is printed: ${printed.join(' | ')}`);
      // The person's browser: authorize (302 to the dashboard), the dashboard approves, then the loopback redirect.
      const start = await fetch(opened, { redirect: 'manual' });
      assert.equal(start.status, 302);
      const requestId = new URL(start.headers.get('location') as string).searchParams.get('request');
      const approved = await svc.call('POST', '/v1/auth/cli/approve', {
        token,
        body: { request: requestId },
      });
      const callback = await fetch((approved.body.data as { redirect_to: string }).redirect_to);
      assert.equal(callback.status, 200);
      const issued = await done;
      assert.equal(issued.token_type, 'Bearer');
      const reg = await send(
        svc.url,
        prepare('/v1/devices/register', await createDeviceIdentity(), hardware(), {
          token: issued.access_token,
        }),
      );
      assert.equal(reg.status, 201);
    });

    describe('CLI sign-in rules', () => {
      const verifier = `${randomUUID()}${randomUUID()}`;
      const challenge = createHash('sha256').update(verifier).digest('base64url');
      const authorize = (redirectUri: string) =>
        fetch(
          `${svc.url}/v1/auth/cli/authorize?${new URLSearchParams({
            redirect_uri: redirectUri,
            state: 'st',
            code_challenge: challenge,
            client_id: 'acp-agent-cli',
            code_challenge_method: 'S256',
          })}`,
          { redirect: 'manual' },
        );
      const start = async (redirectUri: string) => {
        const res = await authorize(redirectUri);
        assert.equal(res.status, 302, redirectUri);
        return new URL(res.headers.get('location') as string).searchParams.get('request') as string;
      };
      const approve = async (requestId: string) => {
        const res = await svc.call('POST', '/v1/auth/cli/approve', { token, body: { request: requestId } });
        assert.equal(res.status, 200, JSON.stringify(res.body));
        return new URL((res.body.data as { redirect_to: string }).redirect_to);
      };
      const exchange = (code: string, redirectUri: string) =>
        svc.call('POST', '/v1/auth/cli/token', {
          body: { code, code_verifier: verifier, redirect_uri: redirectUri },
        });

      test('redirect URIs: http on 127.0.0.1, [::1] and localhost (any port) only; anything else is 400', async () => {
        for (const uri of [
          'http://127.0.0.1:5000/callback',
          'http://[::1]:5000/callback',
          'http://localhost:5000/callback',
          'http://localhost/callback',
        ]) {
          const back = await approve(await start(uri));
          assert.equal(`${back.origin}${back.pathname}`, uri);
        }
        for (const uri of [
          'https://127.0.0.1:5000/callback',
          'http://127.0.0.2:5000/callback',
          'http://[::2]:5000/callback',
          'http://localhost.evil.test:5000/callback',
          'http://127.0.0.1.nip.io/callback',
          'http://user:pw@127.0.0.1:5000/callback',
          'http://127.0.0.1:5000/callback#fragment',
          'ftp://127.0.0.1/callback',
          'not a url',
        ]) {
          const res = await authorize(uri);
          assert.equal(res.status, 400, uri);
          assert.equal(((await res.json()) as { error: string }).error, 'invalid_redirect_uri', uri);
        }
      });

      test('/token: redirect_uri must be the authorize one; a code works once', async () => {
        const redirect = 'http://127.0.0.1:5001/callback';
        const code = (await approve(await start(redirect))).searchParams.get('code') as string;
        const mismatch = await exchange(code, 'http://127.0.0.1:5002/callback');
        assert.deepEqual([mismatch.status, mismatch.body.error], [400, 'invalid_grant']);
        const code2 = (await approve(await start(redirect))).searchParams.get('code') as string;
        const first = await exchange(code2, redirect);
        assert.equal(first.status, 200);
        const second = await exchange(code2, redirect);
        assert.deepEqual([second.status, second.body.error], [400, 'invalid_grant']);
      });

      test('a sign-in request lives 10 minutes, a code 60 seconds', async () => {
        const db = svc.runtime.database.db;
        const redirect = 'http://127.0.0.1:5003/callback';
        const requestId = await start(redirect);
        const [life] = await queryRows(
          db,
          sql`SELECT extract(epoch FROM expires_at - created_at)::float8 AS s FROM cli_signins WHERE id = ${requestId}::uuid`,
        );
        assert.ok(Math.abs(Number(life?.s) - 600) < 2, `request lives ${life?.s} s`);
        // Past its 10 minutes, the request cannot be approved.
        await db.execute(
          sql`UPDATE cli_signins SET expires_at = now() - interval '1 second' WHERE id = ${requestId}::uuid`,
        );
        const late = await svc.call('POST', '/v1/auth/cli/approve', { token, body: { request: requestId } });
        assert.deepEqual([late.status, late.body.error], [404, 'not_found']);
        // A code, within its 60 seconds, works; past them, it does not.
        const id2 = await start(redirect);
        const code = (await approve(id2)).searchParams.get('code') as string;
        const [codeLife] = await queryRows(
          db,
          sql`SELECT extract(epoch FROM code_expires_at - now())::float8 AS s FROM cli_signins WHERE id = ${id2}::uuid`,
        );
        assert.ok(Number(codeLife?.s) > 50 && Number(codeLife?.s) <= 60, `code lives ${codeLife?.s} s`);
        await db.execute(
          sql`UPDATE cli_signins SET code_expires_at = now() - interval '1 second' WHERE id = ${id2}::uuid`,
        );
        const expired = await exchange(code, redirect);
        assert.deepEqual([expired.status, expired.body.error], [400, 'invalid_grant']);
      });

      /** authorize with these query parameters (over a valid base) and headers; the id of the login URL, or the answer. */
      const ask = async (params: Record<string, string>, headers: Record<string, string> = {}) => {
        const res = await fetch(
          `${svc.url}/v1/auth/cli/authorize?${new URLSearchParams({
            client_id: 'acp-agent-cli',
            redirect_uri: 'http://127.0.0.1:5006/callback',
            state: 'st-consent',
            code_challenge: challenge,
            code_challenge_method: 'S256',
            ...params,
          })}`,
          { redirect: 'manual', headers },
        );
        const location = res.headers.get('location');
        return {
          res,
          id: location ? (new URL(location).searchParams.get('request') as string) : undefined,
        };
      };
      const read = (id: string, as = token) => svc.call('GET', `/v1/auth/cli/requests/${id}`, { token: as });
      const refuse = (id: string) =>
        svc.call('POST', '/v1/auth/cli/refuse', { token, body: { request: id } });
      const auditOf = async (action: string, id: string) => {
        const res = await svc.call('GET', `/v1/admin/audit-logs?action_type=${action}&resource_id=${id}`, {
          token,
        });
        assert.equal(res.status, 200, res.text);
        return (res.body.data as { logs: Array<Record<string, unknown>> }).logs;
      };

      test('authorize records who asks: client_id (required, 1-64 printable ASCII), the loopback address, the browser', async () => {
        const before = await count('cli_signins');
        for (const [clientId, why] of [
          [undefined, 'missing'],
          ['', 'empty'],
          ['x'.repeat(65), '65 characters'],
          ['tab\there', 'a control character'],
          [' leading-space', 'a leading space'],
          ['trailing-space ', 'a trailing space'],
          ['caf\u00e9', 'not ASCII'],
        ] as const) {
          const params = new URLSearchParams({
            redirect_uri: 'http://127.0.0.1:5006/callback',
            state: 's',
            code_challenge: challenge,
            code_challenge_method: 'S256',
          });
          if (clientId !== undefined) params.set('client_id', clientId);
          const res = await fetch(`${svc.url}/v1/auth/cli/authorize?${params}`, { redirect: 'manual' });
          const body = (await res.json()) as { error: string; message: string };
          assert.deepEqual([res.status, body.error], [400, 'validation_failed'], why);
          assert.match(body.message, /client_id/, why);
        }
        assert.equal(await count('cli_signins'), before, 'a refused authorize stores nothing');

        const longest = `${'A'.repeat(32)} agent/1.0 (x) ${'z'.repeat(17)}`;
        assert.equal(longest.length, 64);
        const browser = `Mozilla/5.0 (X11; Linux x86_64) ${'b'.repeat(400)}`;
        const { res, id } = await ask(
          { client_id: longest, redirect_uri: 'http://[::1]:5007/cb?x=1' },
          { 'user-agent': browser },
        );
        assert.equal(res.status, 302);
        const shown = await read(id as string);
        assert.equal(shown.status, 200, shown.text);
        const view = shown.body.data as Record<string, string | null>;
        assert.equal(view.id, id);
        assert.equal(view.client_id, longest);
        assert.equal(view.redirect_uri, 'http://[::1]:5007/cb?x=1');
        assert.equal(view.loopback_address, '[::1]:5007');
        assert.equal(view.status, 'pending');
        assert.equal(view.source_ip, '127.0.0.1');
        assert.equal(view.user_agent, browser.slice(0, 256));
        const asked = Date.parse(view.created_at as string);
        assert.ok(Math.abs(asked - Date.now()) < 60_000, `created_at ${view.created_at}`);
        assert.equal(Date.parse(view.expires_at as string) - asked, 600_000);
        // localhost without a port: the address says port 80, where the browser will go.
        const bare = await ask({ redirect_uri: 'http://localhost/callback' }, {});
        assert.equal(
          ((await read(bare.id as string)).body.data as { loopback_address: string }).loopback_address,
          'localhost:80',
        );
      });

      test('reading a sign-in: only a signed-in person; unknown, expired or not a UUID is refused', async () => {
        const { id } = await ask({});
        const anonymous = await svc.call('GET', `/v1/auth/cli/requests/${id}`);
        assert.deepEqual([anonymous.status, anonymous.body.error], [401, 'unauthorized']);
        const unknown = await read(randomUUID());
        assert.deepEqual([unknown.status, unknown.body.error], [404, 'not_found']);
        assert.match(String(unknown.body.message), /expired after 10 minutes/);
        const malformed = await svc.call('GET', '/v1/auth/cli/requests/not-a-uuid', { token });
        assert.deepEqual([malformed.status, malformed.body.error], [400, 'validation_failed']);
        assert.match(String(malformed.body.message), /\bid\b/);
        await svc.runtime.database.db.execute(
          sql`UPDATE cli_signins SET expires_at = now() - interval '1 second' WHERE id = ${id as string}::uuid`,
        );
        const expired = await read(id as string);
        assert.deepEqual([expired.status, expired.body.error], [404, 'not_found']);
        const late = await refuse(id as string);
        assert.deepEqual([late.status, late.body.error], [404, 'not_found']);
      });

      test('refuse: the loopback redirect with error=access_denied and state, audited; a decided sign-in is 409', async () => {
        const { id } = await ask({ client_id: 'refused-agent' });
        const refused = await refuse(id as string);
        assert.equal(refused.status, 200, refused.text);
        const back = new URL((refused.body.data as { redirect_to: string }).redirect_to);
        assert.equal(`${back.origin}${back.pathname}`, 'http://127.0.0.1:5006/callback');
        assert.deepEqual([...back.searchParams].sort(), [
          ['error', 'access_denied'],
          ['state', 'st-consent'],
        ]);
        assert.equal(((await read(id as string)).body.data as { status: string }).status, 'refused');
        const [record, ...more] = await auditOf('cli_signin.refused', id as string);
        assert.equal(more.length, 0);
        const me = (await svc.call('GET', '/v1/me', { token })).body.data as {
          subject: string;
          email: string;
        };
        assert.equal(record?.actor_id, me.subject);
        assert.equal(record?.actor_email, me.email);
        assert.equal(record?.resource_type, 'cli_signin');
        assert.deepEqual(record?.metadata, {
          client_id: 'refused-agent',
          loopback_address: '127.0.0.1:5006',
        });

        const audits = await count('audit_logs');
        const approveRefused = await svc.call('POST', '/v1/auth/cli/approve', {
          token,
          body: { request: id },
        });
        assert.deepEqual([approveRefused.status, approveRefused.body.error], [409, 'signin_already_refused']);
        assert.match(String(approveRefused.body.message), /was refused/);
        const twice = await refuse(id as string);
        assert.deepEqual([twice.status, twice.body.error], [409, 'signin_already_refused']);
        assert.equal(await count('audit_logs'), audits, 'a 409 writes no audit record');
        assert.equal(((await read(id as string)).body.data as { status: string }).status, 'refused');

        // Approved, then refused: 409, and the approval stands; its code still works once, and then it is used.
        const second = await ask({ client_id: 'approved-agent' });
        const code = (await approve(second.id as string)).searchParams.get('code') as string;
        const [approval] = await auditOf('cli_signin.approved', second.id as string);
        assert.deepEqual(approval?.metadata, {
          client_id: 'approved-agent',
          loopback_address: '127.0.0.1:5006',
        });
        const refuseApproved = await refuse(second.id as string);
        assert.deepEqual(
          [refuseApproved.status, refuseApproved.body.error],
          [409, 'signin_already_approved'],
        );
        assert.match(String(refuseApproved.body.message), /can no longer be refused/);
        assert.equal(((await read(second.id as string)).body.data as { status: string }).status, 'approved');
        assert.equal((await exchange(code, 'http://127.0.0.1:5006/callback')).status, 200);
        assert.equal(((await read(second.id as string)).body.data as { status: string }).status, 'used');
        const refuseUsed = await refuse(second.id as string);
        assert.deepEqual([refuseUsed.status, refuseUsed.body.error], [409, 'signin_already_approved']);
        assert.equal((await auditOf('cli_signin.refused', second.id as string)).length, 0);
      });

      test('agent login: a refusal in the browser ends it at once with "sign-in refused in the browser"', async () => {
        let opened = '';
        const started = Date.now();
        const done = login({
          baseUrl: svc.url,
          print: () => {},
          openBrowser: async (url) => {
            opened = url;
            return true;
          },
          timeoutMs: 60_000,
        });
        const outcome = done.then(
          () => 'signed in',
          (err: Error) => err.message,
        );
        while (!opened) await new Promise((r) => setTimeout(r, 10));
        assert.equal(new URL(opened).searchParams.get('client_id'), 'acp-agent-cli');
        const start = await fetch(opened, { redirect: 'manual' });
        const requestId = new URL(start.headers.get('location') as string).searchParams.get(
          'request',
        ) as string;
        const shown = (await read(requestId)).body.data as { client_id: string; loopback_address: string };
        assert.equal(shown.client_id, 'acp-agent-cli');
        assert.equal(
          shown.loopback_address,
          new URL(new URL(opened).searchParams.get('redirect_uri') as string).host,
        );
        const refused = await refuse(requestId);
        const callback = await fetch((refused.body.data as { redirect_to: string }).redirect_to);
        assert.equal(callback.status, 200);
        assert.match(await callback.text(), /Sign-in refused/);
        assert.equal(await outcome, 'sign-in refused in the browser');
        assert.ok(Date.now() - started < 30_000, 'it did not wait for its timeout');
      });
    });

    test('pruning: the probe deletes replay records past their window and expired sign-ins, and nothing else', async () => {
      const db = svc.runtime.database.db;
      const { identity } = await enroll();
      const skew = svc.runtime.config.device.max_clock_skew;
      // Signed at the very edge of the freshness window: its replay record expires two seconds from now.
      const edge = prepare(
        '/v1/devices/inventory',
        identity,
        { agents: [] },
        { clientTimestamp: new Date(Date.now() - skew + 2000).toISOString() },
      );
      assert.equal((await send(svc.url, edge)).status, 200);
      const fresh = prepare('/v1/devices/inventory', identity, { agents: [] });
      assert.equal((await send(svc.url, fresh)).status, 200);
      const signin = async () => {
        const res = await fetch(
          `${svc.url}/v1/auth/cli/authorize?${new URLSearchParams({
            redirect_uri: 'http://127.0.0.1:5004/callback',
            state: 's',
            code_challenge: 'x'.repeat(43),
            client_id: 'acp-agent-cli',
            code_challenge_method: 'S256',
          })}`,
          { redirect: 'manual' },
        );
        return new URL(res.headers.get('location') as string).searchParams.get('request') as string;
      };
      const oldSignin = await signin();
      const newSignin = await signin();
      await db.execute(
        sql`UPDATE cli_signins SET expires_at = now() - interval '1 second' WHERE id = ${oldSignin}::uuid`,
      );
      const rows = async () => ({
        signatures: await count('device_signatures'),
        expiredSignatures: Number(
          (
            await queryRows(
              db,
              sql`SELECT count(*)::int AS n FROM device_signatures WHERE expires_at < now()`,
            )
          )[0]?.n,
        ),
        signins: (
          await queryRows(
            db,
            sql`SELECT id::text AS id FROM cli_signins WHERE id IN (${oldSignin}::uuid, ${newSignin}::uuid)`,
          )
        )
          .map((r) => r.id)
          .sort(),
      });
      while ((await rows()).expiredSignatures === 0) await new Promise((r) => setTimeout(r, 200));
      const before = await rows();
      await svc.runSchedule('healthProbe');
      const after = await rows();
      assert.equal(after.expiredSignatures, 0);
      assert.equal(after.signatures, before.signatures - before.expiredSignatures);
      assert.ok(after.signatures >= 1, 'the fresh record is kept');
      assert.deepEqual(after.signins, [newSignin]);
      // The pruned record's request is past its window: sending it again is stale, not accepted.
      const again = await send(svc.url, edge);
      assert.deepEqual([again.status, again.body.error], [401, 'stale_timestamp']);
      const replay = await send(svc.url, fresh);
      assert.deepEqual([replay.status, replay.body.error], [401, 'replayed_request']);
    });

    if (driver !== 'pglite') {
      test('replay is refused across two service instances on one database', async () => {
        const { identity } = await enroll();
        const other = await spawnServiceProcess(svc.runtime.config.db.dsn);
        try {
          const request = prepare('/v1/devices/events', identity, { events: [event()] });
          assert.equal((await send(svc.url, request)).status, 200);
          const there = await send(other.url, request);
          assert.deepEqual([there.status, there.body.error], [401, 'replayed_request']);
          // The same signed request to both at once: exactly one is accepted.
          const both = prepare('/v1/devices/inventory', identity, { agents: [] });
          const answers = await Promise.all([send(svc.url, both), send(other.url, both)]);
          assert.deepEqual(answers.map((a) => a.status).sort(), [200, 401]);
          assert.equal(answers.find((a) => a.status === 401)?.body.error, 'replayed_request');
        } finally {
          await other.stop();
        }
      });
    }
  });

  describe(`without a dashboard URL on ${driver}`, () => {
    test('sign-in unmounted without a dashboard URL while enrolled devices keep reporting', async () => {
      const database = await provisionDatabase(driver);
      let service = await startOnDatabase(database.dsn, DASHBOARD);
      try {
        const identity = await createDeviceIdentity();
        const serial = `KEEP-${randomUUID().slice(0, 6)}`;
        const enrolled = await send(
          service.url,
          prepare('/v1/devices/register', identity, hardware(serial), {
            token: await loginToken(service.url),
          }),
        );
        assert.equal(enrolled.status, 201);
        await service.stop();

        const lines: string[] = [];
        const prev = setLogSink((l) => lines.push(l));
        try {
          service = await startOnDatabase(database.dsn, undefined);
        } finally {
          setLogSink(prev);
        }
        assert.ok(
          lines.some((l) => l.includes('CLI sign-in is disabled')),
          'the disabled sign-in is logged',
        );
        const url = service.url;
        const token = await loginToken(url);
        const authorize = await fetch(
          `${url}/v1/auth/cli/authorize?${new URLSearchParams({
            redirect_uri: 'http://127.0.0.1:5005/callback',
            state: 's',
            code_challenge: 'x'.repeat(43),
            client_id: 'acp-agent-cli',
            code_challenge_method: 'S256',
          })}`,
          { redirect: 'manual' },
        );
        assert.equal(authorize.status, 404);
        const post = (path: string, body: unknown) =>
          fetch(`${url}${path}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
            body: JSON.stringify(body),
          });
        assert.equal((await post('/v1/auth/cli/approve', { request: randomUUID() })).status, 404);
        const tokenRes = await post('/v1/auth/cli/token', {
          code: 'c',
          code_verifier: 'v'.repeat(43),
          redirect_uri: 'http://127.0.0.1:5005/callback',
        });
        assert.equal(tokenRes.status, 404);
        // The agent's login says so at once instead of waiting for a sign-in that cannot happen.
        await assert.rejects(
          login({ baseUrl: url, print: () => {}, openBrowser: async () => false }),
          /disabled/,
        );

        const db = service.runtime.database.db;
        const tally = async () =>
          (
            await queryRows(
              db,
              sql`SELECT concat_ws(',', (SELECT count(*) FROM devices), (SELECT count(*) FROM device_certificates),
                    (SELECT count(*) FROM device_signatures), (SELECT count(*) FROM audit_logs)) AS t`,
            )
          )[0]?.t;
        const before = await tally();
        const newcomer = await send(
          url,
          prepare('/v1/devices/register', await createDeviceIdentity(), hardware(), { token }),
        );
        assert.deepEqual([newcomer.status, newcomer.body.error], [403, 'enrollment_disabled']);
        assert.match(String(newcomer.body.message), /--dashboard-url/);
        assert.match(String(newcomer.body.message), /SVC_DASHBOARD_URL/);
        const rotation = await send(
          url,
          prepare('/v1/devices/register', await createDeviceIdentity('ed25519'), hardware(serial), { token }),
        );
        assert.deepEqual([rotation.status, rotation.body.error], [403, 'enrollment_disabled']);
        assert.equal(await tally(), before, 'nothing stored');

        const again = await send(url, prepare('/v1/devices/register', identity, hardware(serial), { token }));
        assert.equal(again.status, 200);
        assert.equal(again.body.deviceId, enrolled.body.deviceId);
        const inventory = await send(url, prepare('/v1/devices/inventory', identity, { agents: [] }));
        assert.equal(inventory.status, 200);
        const events = await send(
          url,
          prepare('/v1/devices/events', identity, {
            events: [invocationEvent()],
          }),
        );
        assert.deepEqual([events.status, events.body.accepted], [200, 1]);
      } finally {
        await service.stop();
        await database.cleanup();
      }
    });
  });
}
