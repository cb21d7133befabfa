// Admin observability: every response stays under 1 MiB (the RDS Data API's response cap) in the worst
// case, on every driver (the Data API test endpoint refuses database responses over 1 MiB). Events of the maximum
// size the device protocol accepts, every text made of control characters (6 bytes each in JSON, the most any
// character costs), go through the real ingest path; so do a 500-MCP inventory and 150 devices with maximal fields.
// Lists shorten long text (the detail returns it whole) and cut pages by bytes, and paging still visits every row.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { createDeviceIdentity, type DeviceIdentity } from '#agent/identity.ts';
import { canonicalize } from '#shared/core/canonical-json.ts';
import { rowsOf } from '#shared/core/db/query.ts';
import { driversUnderTest } from '#test/support/databases.ts';
import { hardware, prepare, send } from '#test/support/device-requests.ts';
import { startTestService, type TestService } from '#test/support/service.ts';

type Json = Record<string, unknown>;
const MIB = 1024 * 1024;
const CTRL = '\u0001';
/** `n` characters: a distinguishing ASCII tag, then control characters (each \u0001 in JSON: 6 bytes). */
const worst = (n: number, tag: string) => `${tag}${CTRL.repeat(n - tag.length)}`;
const ascii = (n: number, tag: string) => `${tag}${'x'.repeat(n - tag.length)}`;

const EVENTS = 120;
const SESSION = 's'.repeat(200);

/** An event with every field at its maximum length; names differ per event so that top lists fill up. */
function maxEvent(i: number, over: Json = {}): Json {
  return {
    event_id: randomUUID(),
    event_time: new Date(Date.now() - 60_000 - i * 1000).toISOString(),
    agent_type: worst(100, `a${i}-`),
    mcp_name: worst(200, `m${i}-`),
    tool: worst(200, `t${i}-`),
    event_type: 'invocation',
    result: 'denied',
    deny_code: worst(200, `d${i}-`),
    // Control characters where list views show text (the first 200), cheaper ASCII after (the body is 1 MiB).
    deny_reason: `${worst(250, `reason${i}-`)}${ascii(1750, '')}`,
    error_message: `${worst(250, `error${i}-`)}${ascii(3750, '')}`,
    rule_applied: worst(500, `r${i}-`),
    model: worst(200, `mo${i}-`),
    session_id: SESSION,
    group: worst(200, `g${i}-`),
    actor_email: worst(320, `u${i}-`),
    tokens_in: 100_000_000,
    tokens_out: 100_000_000,
    duration_ms: 86_400_000,
    skills: Array.from({ length: 100 }, (_, k) =>
      k < 12 ? worst(200, `s${i}-${k}-`) : ascii(200, `s${k}-`),
    ),
    prompt: `${worst(250, `p${i}-`)}${ascii(3846, '')}`,
    metadata: {},
    ...over,
  };
}

for (const driver of driversUnderTest()) {
  describe(`admin observability response bounds on ${driver}`, () => {
    let svc: TestService;
    let token: string;
    let identity: DeviceIdentity;
    let deviceId: string;
    const sent: Json[] = [];
    // The largest result row the service read from the database since the last request (the Data API refuses rows
    // over 64 KB; its test endpoint does not check that, so it is measured here on every driver).
    let largestRow = 0;
    const get = async (path: string) => {
      largestRow = 0;
      const res = await svc.call('GET', path, { token });
      assert.equal(res.status, 200, `${path}: ${res.text.slice(0, 300)}`);
      const bytes = Buffer.byteLength(res.text);
      assert.ok(bytes < MIB, `${path}: ${bytes} bytes`);
      assert.ok(largestRow > 0 && largestRow <= 64 * 1024, `${path}: a result row of ${largestRow} bytes`);
      return { data: res.body.data as Json, bytes };
    };
    const signed = async (path: string, fields: Json) => {
      const res = await send(svc.url, prepare(path, identity, fields));
      assert.equal(res.status, 200, JSON.stringify(res.body).slice(0, 300));
    };

    before(async () => {
      svc = await startTestService(driver, {
        dashboard_url: 'http://dashboard.test',
        events: { max_batch: 1000, prompt_max_chars: 4096 },
      });
      token = await svc.adminToken();
      const db = svc.runtime.database.db;
      const execute = db.execute.bind(db);
      const size = (v: unknown) =>
        typeof v === 'string' ? Buffer.byteLength(v) : Buffer.byteLength(JSON.stringify(v) ?? '');
      db.execute = (async (query: Parameters<typeof execute>[0]) => {
        const result = await execute(query);
        for (const row of rowsOf(result)) {
          largestRow = Math.max(
            largestRow,
            Object.values(row).reduce<number>((n, v) => n + size(v), 0),
          );
        }
        return result;
      }) as typeof db.execute;
      identity = await createDeviceIdentity('p256');
      const hw = {
        ...hardware(worst(128, 'SN-')),
        brand: worst(128, 'brand-'),
        model: worst(256, 'model-'),
        ownerEmail: worst(320, 'owner-'),
      };
      const reg = await send(svc.url, prepare('/v1/devices/register', identity, hw, { token }));
      assert.equal(reg.status, 201, JSON.stringify(reg.body));
      deviceId = String(reg.body.deviceId);
      // The largest inventory: one agent with 500 MCPs of 200-character names.
      await signed('/v1/devices/inventory', {
        agents: [
          {
            agentType: worst(100, 'agent-'),
            displayName: worst(200, 'display-'),
            mcps: Array.from({ length: 500 }, (_, k) => ({
              name: worst(200, `mcp${k}-`),
              enabled: true,
              transport: 'stdio',
            })),
          },
        ],
      });
      // Maximal events, in batches that fit the 1 MiB body.
      let batch: Json[] = [];
      const flush = async () => {
        if (batch.length) await signed('/v1/devices/events', { events: batch });
        batch = [];
      };
      for (let i = 0; i < EVENTS; i++) {
        const e = maxEvent(i);
        if (Buffer.byteLength(canonicalize({ events: [...batch, e] })) > 900 * 1024) await flush();
        batch.push(e);
        sent.push(e);
      }
      await flush();
      // 150 devices with maximal fields (straight into the table: only the list's size matters here).
      await svc.runtime.database.db.execute(
        sql`INSERT INTO devices (serial_number, brand, model, owner_subject, owner_email, certificate_fingerprint,
            certificate_pem, key_type, cert_not_before, cert_not_after, last_seen_at)
          SELECT 'SN' || n || repeat(chr(1), 126 - length(n::text)), repeat(chr(1), 128), repeat(chr(1), 256),
            repeat(chr(1), 320), repeat(chr(1), 320), 'fp-' || n, 'pem', 'p256', now(), now() + interval '1 day', now()
          FROM generate_series(1, 150) AS n`,
      );
    });
    after(async () => svc?.dispose());

    const walk = async (path: string, items: string) => {
      const ids: string[] = [];
      let pages = 0;
      let cursor: string | null = null;
      let firstCount = 0;
      do {
        const sep = path.includes('?') ? '&' : '?';
        const { data } = await get(`${path}${sep}limit=100${cursor ? `&cursor=${cursor}` : ''}`);
        const list = data[items] as Json[];
        if (pages === 0) firstCount = list.length;
        ids.push(...list.map((x) => String(x.id ?? x.name ?? x.agent_type)));
        cursor = data.next_cursor as string | null;
        pages++;
      } while (cursor);
      assert.equal(new Set(ids).size, ids.length, `${path}: no repeats`);
      return { ids, pages, firstCount };
    };

    test('event list and session: long text shortened with a flag, pages cut by bytes, every event visited', async () => {
      const events = await walk('/v1/admin/observability/events', 'events');
      assert.equal(events.ids.length, EVENTS);
      assert.ok(events.firstCount < 100, `the byte bound cut the first page (${events.firstCount} events)`);
      const session = await walk(`/v1/admin/observability/sessions/${SESSION}`, 'events');
      assert.equal(session.ids.length, EVENTS);
      assert.ok(session.firstCount < 100);
      const { data } = await get('/v1/admin/observability/events?limit=5');
      for (const e of data.events as Json[]) {
        assert.deepEqual(e.truncated, ['deny_reason', 'error_message', 'skills']);
        assert.equal(String(e.deny_reason).length, 200);
        assert.equal(String(e.error_message).length, 200);
        assert.equal(String(e.prompt_preview).length, 200);
        assert.equal((e.skills as string[]).length, 10);
        assert.ok((e.skills as string[]).every((s) => s.length === 100));
        assert.equal('metadata' in e, false);
      }
      const mostRecent = (data.events as Json[])[0] as Json;
      const detail = await get(`/v1/admin/observability/events/${mostRecent.id}`);
      const original = sent[0] as Json;
      for (const field of ['deny_reason', 'error_message', 'skills', 'tool', 'rule_applied', 'actor_email']) {
        assert.deepEqual(detail.data[field], original[field], field);
      }
      assert.equal(detail.data.prompt, original.prompt);
    });

    test('event detail: metadata up to 256 KiB shown, larger omitted with a flag', async () => {
      const small = maxEvent(1000, { metadata: { blob: 'y'.repeat(200 * 1024) } });
      const large = maxEvent(1001, { metadata: { blob: 'z'.repeat(700 * 1024) } });
      await signed('/v1/devices/events', { events: [small] });
      await signed('/v1/devices/events', { events: [large] });
      for (const [e, shown] of [
        [small, true],
        [large, false],
      ] as const) {
        const { data } = await get(
          `/v1/admin/observability/events?tool=${encodeURIComponent(String(e.tool))}`,
        );
        const id = (data.events as Json[])[0]?.id;
        const detail = await get(`/v1/admin/observability/events/${id}`);
        assert.equal(detail.data.metadata_omitted, !shown);
        assert.deepEqual(detail.data.metadata, shown ? e.metadata : null);
        assert.deepEqual(detail.data.skills, e.skills);
      }
    });

    test('summary with top=50 and minute buckets, and the filter values: bounded lists, flagged', async () => {
      const summary = await get('/v1/admin/observability/summary?top=50');
      const top = summary.data.top as Record<string, Json[]>;
      for (const list of Object.values(top)) assert.ok(list.length <= 50);
      // Names this long fill the 32 KiB of a list before 50 entries.
      assert.ok((summary.data.top_truncated as string[]).includes('deny_codes'));
      assert.ok((top.deny_codes?.length ?? 0) < 50);
      // The top tools are cut by bytes too, and each tool kept still has its percentiles (its sketches).
      assert.ok((summary.data.top_truncated as string[]).includes('tools'));
      assert.ok((top.tools?.length ?? 0) > 0 && (top.tools?.length ?? 0) < 50);
      for (const tool of top.tools ?? []) {
        assert.ok(
          Math.abs(Number(tool.duration_p50_ms) / 86_400_000 - 1) <= 0.02,
          String(tool.duration_p50_ms),
        );
      }
      const minutes = await get(
        `/v1/admin/observability/summary?top=50&bucket=minute&from=${new Date(Date.now() - 24 * 3_600_000).toISOString()}`,
      );
      const range = minutes.data.range as Json;
      assert.equal(
        (minutes.data.series as Json[]).length,
        (Date.parse(String(range.to)) - Date.parse(String(range.from))) / 60_000,
      );
      const filters = await get('/v1/admin/observability/filters?limit=100');
      const values = filters.data.values as Record<string, { values: Json[]; truncated: boolean }>;
      assert.equal(values.tool?.truncated, true);
      assert.ok((values.tool?.values.length ?? 0) < 100);
    });

    test('devices, device detail, agents, MCPs and the change feed: under 1 MiB, totals and flags', async () => {
      const devices = await walk('/v1/admin/devices?sort=serial', 'devices');
      assert.equal(devices.ids.length, 151);
      const detail = await get(`/v1/admin/devices/${deviceId}`);
      assert.equal(detail.data.mcps_total, 500);
      assert.equal(detail.data.mcps_truncated, true);
      assert.ok((detail.data.mcps as Json[]).length < 500);
      assert.equal(detail.data.agents_total, 1);
      await get('/v1/admin/agents?limit=100');
      const mcps = await walk('/v1/admin/mcps', 'mcps');
      assert.equal(mcps.ids.length, 500);
      const shadow = await get('/v1/admin/mcps?limit=100');
      assert.ok((shadow.data.shadow as Json[]).length < 100);
      assert.ok(Number(shadow.data.shadow_total) >= EVENTS);
      const changes = await walk('/v1/admin/fleet/changes', 'changes');
      assert.equal(changes.ids.length, 501);
      await get('/v1/admin/fleet/summary');
    });
  });
}
