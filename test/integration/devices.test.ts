// The device wire contract (../shared/docs/device-protocol.md), tested from its text on every driver.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { SignJWT } from 'jose';
import { createDeviceIdentity } from '#shared/agent/identity.ts';
import { queryRows } from '#shared/db/query.ts';
import { setLogSink } from '#shared/http/logger.ts';
import { driversUnderTest } from '#test/support/databases.ts';
import {
  expiredIdentity,
  hardware,
  independentFingerprint,
  issuedIdentity,
  p384Identity,
  prepare,
  send,
} from '#test/support/device-requests.ts';
import { startTestService, TEST_JWT_SECRET, type TestService } from '#test/support/service.ts';

const DASHBOARD = 'http://dashboard.test';

for (const driver of driversUnderTest()) {
  describe(`device protocol on ${driver}`, () => {
    let svc: TestService;
    let token: string;
    const count = async (table: string) => {
      const [row] = await queryRows<{ n: number }>(
        svc.runtime.database.db,
        sql.raw(`SELECT count(*)::int AS n FROM ${table}`),
      );
      return Number(row?.n);
    };
    const enroll = async (keyType: 'p256' | 'ed25519' = 'p256', serial?: string) => {
      const identity = await createDeviceIdentity(keyType);
      const res = await send(svc.url, prepare('/v1/devices/register', identity, hardware(serial), { token }));
      assert.equal(res.status, 201, JSON.stringify(res.body));
      return { identity, deviceId: res.body.deviceId as string };
    };
    const event = (over: Record<string, unknown> = {}) => ({
      event_id: randomUUID(),
      event_time: new Date().toISOString(),
      agent_type: 'claude-code',
      mcp_name: 'github',
      tool: 'search_code',
      event_type: 'invocation',
      result: 'allowed',
      tokens_in: 120,
      tokens_out: 30,
      duration_ms: 45,
      ...over,
    });

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
        const [row] = await queryRows<{ owner_subject: string; owner_email: string }>(
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
      assert.equal(back.status, 401);
      const logs = await svc.call(
        'GET',
        `/v1/admin/audit-logs?action_type=device.certificate_rotated&resource_id=${deviceId}`,
        { token },
      );
      assert.equal((logs.body.data as { total: number }).total, 1);
    });

    test('unknown certificate: 401 unknown_device, nothing stored', async () => {
      const stranger = await createDeviceIdentity();
      const res = await send(svc.url, prepare('/v1/devices/events', stranger, { events: [event()] }));
      assert.deepEqual([res.status, res.body.error], [401, 'unknown_device']);
      assert.equal((await count('device_signatures')) >= 0, true);
    });

    test('inventory: replaces the snapshot, keeps first seen, records changes; MCP command/args/env never stored or logged', async () => {
      const { identity, deviceId } = await enroll();
      const lines: string[] = [];
      const prev = setLogSink((l) => lines.push(l));
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
      const dump = await queryRows<{ t: string }>(
        svc.runtime.database.db,
        sql`SELECT (SELECT coalesce(json_agg(m), '[]')::text FROM inventory_mcps m) || (SELECT coalesce(json_agg(a), '[]')::text FROM inventory_agents a) || (SELECT coalesce(json_agg(l), '[]')::text FROM audit_logs l) AS t`,
      );
      for (const secret of ['npx-secret-command', 'ghp_SECRETSECRET', 'ghp_ENVSECRET']) {
        assert.equal(dump[0]?.t.includes(secret), false, `${secret} stored`);
        assert.equal(lines.join('\n').includes(secret), false, `${secret} logged`);
      }
      const [seen] = await queryRows<{ first: string }>(
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
      const rows = await queryRows<{
        name: string;
        enabled: boolean;
        transport: string;
        removed: boolean;
        first: string;
        moved: boolean;
      }>(
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
      const changes = await queryRows<{ kind: string; agent_type: string; mcp_name: string | null }>(
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
      const dup = randomUUID();
      const batch = [
        event({ event_id: dup, prompt: 'a prompt that is longer than sixteen characters' }),
        event({
          result: 'denied',
          deny_code: 'path_outside_workspace',
          deny_reason: 'no',
          rule_applied: 'fs.ws',
        }),
        event({ result: 'error', event_type: 'error', error_message: 'boom', event_id: undefined }),
        event({ event_id: dup }),
      ];
      const res = await send(svc.url, prepare('/v1/devices/events', identity, { events: batch }));
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(
        [res.body.success, res.body.deviceId, res.body.accepted, res.body.duplicates],
        [true, deviceId, 3, 1],
      );
      const again = await send(
        svc.url,
        prepare('/v1/devices/events', identity, { events: [event({ event_id: dup })] }),
      );
      assert.deepEqual([again.body.accepted, again.body.duplicates], [0, 1]);
      const stored = await queryRows<{
        serial_number: string;
        source_ip: string;
        prompt: string | null;
        prompt_truncated: boolean;
        received: boolean;
      }>(
        svc.runtime.database.db,
        sql`SELECT serial_number, source_ip, prompt, prompt_truncated, received_at IS NOT NULL AS received
            FROM observability_events WHERE device_id = ${deviceId}::uuid ORDER BY id`,
      );
      assert.equal(stored.length, 3);
      assert.equal(stored[0]?.prompt, 'a prompt that is');
      assert.equal(stored[0]?.prompt_truncated, true);
      assert.equal(stored[1]?.prompt_truncated, false);
      assert.ok(
        stored.every((s) => s.source_ip === '127.0.0.1' && s.received && s.serial_number.startsWith('SN-')),
      );
      const [dev] = await queryRows<{ seen: boolean }>(
        svc.runtime.database.db,
        sql`SELECT last_seen_at IS NOT NULL AND last_event_at IS NOT NULL AS seen FROM devices WHERE id = ${deviceId}::uuid`,
      );
      assert.equal(dev?.seen, true);
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
      assert.equal((await svc.call('GET', '/v1/admin/users', { token: cliToken })).status, 403);
      assert.equal((await svc.call('GET', '/v1/me', { token: cliToken })).status, 403);
      const approveWithCli = await svc.call('POST', '/v1/auth/cli/approve', {
        token: cliToken,
        body: { request: id2 },
      });
      assert.equal(approveWithCli.status, 403);
    });
  });
}
