// Export destinations end to end, on every driver (docs/exports.md): destinations made through the admin API stream
// the stored events to local receivers that decode them as the real ones do (OTLP protobuf with the
// opentelemetry-proto definitions, OTLP JSON, Splunk HEC's event JSON, signed JSON lines). Covered: every event
// arrives; an outage (connections refused) builds lag and loses nothing, delivery resuming from the cursor; a batch
// the receiver took but answered 500 is sent again and counted; 429 with Retry-After is honoured; a replay sends a
// range again; retention keeps a day a destination has not received. Every response is checked against OpenAPI.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { applyEventRetention } from '#shared/observability/partitions/maintenance.ts';
import { driversUnderTest } from '#test/support/databases.ts';
import { enrolledDevice, prepare, send } from '#test/support/device-requests.ts';
import {
  decodeOtlpMetricCount,
  decodeOtlpTraces,
  parseHecBatch,
  Receiver,
  webhookVerifies,
} from '#test/support/export-receivers.ts';
import { runScheduleUntil, startTestService, type TestService } from '#test/support/service.ts';

type Json = Record<string, unknown>;
const HEC_TOKEN = randomUUID();
const HOOK_KEY = randomBytes(32).toString('base64');
const OTLP_KEY = randomUUID();
const DAY = 86_400_000;

for (const driver of driversUnderTest()) {
  describe(`export destinations on ${driver}`, () => {
    let svc: TestService;
    let admin: string;
    let device: Awaited<ReturnType<typeof enrolledDevice>>;
    const receivers = {
      proto: new Receiver(),
      json: new Receiver(),
      hec: new Receiver(),
      hook: new Receiver(),
    };
    const ids: Record<keyof typeof receivers, string> = { proto: '', json: '', hec: '', hook: '' };
    const ingested: string[] = [];

    before(async () => {
      for (const r of Object.values(receivers)) await r.start();
      svc = await startTestService(driver, {
        dashboard_url: 'http://dashboard.test',
        exports: {
          batch: 25,
          backoff: '200ms',
          max_backoff: '3s',
          timeout: '2s',
          secrets: {
            'hec-token': HEC_TOKEN,
            'hook-key': HOOK_KEY,
            'otlp-headers': JSON.stringify({ 'x-api-key': OTLP_KEY }),
          },
        },
      });
      admin = await svc.adminToken();
      device = await enrolledDevice(svc.url, admin);
    });
    after(async () => {
      await svc?.dispose();
      for (const r of Object.values(receivers)) await r.stop();
    });

    const api = (method: string, path: string, body?: unknown) =>
      svc.call(method, `/v1/admin/exports/destinations${path}`, { token: admin, body });

    /** Stores `n` events (a third denied, a third failed) and remembers their ids. */
    const ingest = async (n: number) => {
      const events = Array.from({ length: n }, (_, i) => ({
        event_id: randomUUID(),
        event_time: new Date(Date.now() - 60_000 + i).toISOString(),
        agent_type: 'claude-code',
        mcp_name: 'github',
        tool: `tool_${i % 4}`,
        event_type: i % 3 === 2 ? 'error' : 'invocation',
        result: ['allowed', 'denied', 'error'][i % 3],
        ...(i % 3 === 1
          ? { deny_code: 'blocked', rule_applied: 'r1@3', deny_reason: 'not on the list' }
          : {}),
        ...(i % 3 === 2 ? { error_message: 'boom' } : {}),
        session_id: `s-${i % 2}`,
        duration_ms: 10 * i,
      }));
      const res = await send(svc.url, prepare('/v1/devices/events', device, { events }));
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const stored = await svc.call('GET', `/v1/admin/observability/events?limit=${n}`, { token: admin });
      assert.equal(stored.status, 200);
      ingested.push(...((stored.body.data as Json).events as Json[]).map((e) => String(e.id)));
    };

    const status = async (which: keyof typeof receivers) => {
      const res = await api('GET', `/${ids[which]}`);
      assert.equal(res.status, 200, res.text);
      return (res.body.data as Json).status as Json;
    };

    /** Runs delivery passes until `done` holds. */
    const passUntil = (done: () => Promise<boolean>, what: string) =>
      runScheduleUntil(svc, 'exportDelivery', done, what);
    const deliverAll = (which: (keyof typeof receivers)[] = ['proto', 'json', 'hec', 'hook']) =>
      passUntil(
        async () =>
          (await Promise.all(which.map(async (w) => (await status(w)).lag_events))).every((n) => n === 0),
        'delivery did not catch up',
      );
    const failed = (which: keyof typeof receivers) =>
      passUntil(async () => (await status(which)).last_error !== null, `${which} never failed`);

    const spanEventIds = (r: Receiver) =>
      r
        .at('/v1/traces')
        .flatMap((q) => decodeOtlpTraces(q.body, String(q.headers['content-type'])))
        .filter((s) => s.kind === 3);
    const hecEvents = () =>
      receivers.hec.at('/services/collector/event').flatMap((q) => parseHecBatch(q.body.toString('utf8')));
    const hookLines = () =>
      receivers.hook.requests.flatMap((q) =>
        q.body
          .toString('utf8')
          .split('\n')
          .filter((l) => l !== '')
          .map((l) => JSON.parse(l) as Json),
      );
    /** The stored event id an OCSF record came from (its metadata.uid). */
    const ocsfIds = (records: Json[]) => records.map((r) => String((r.metadata as Json).uid));

    test('admin API: create each kind, bad settings named, secrets only by name', async () => {
      const bad = await api('POST', '', {
        kind: 'otlp_http',
        name: 'bad',
        settings: { endpoint: 'ftp://x' },
      });
      assert.equal(bad.status, 400);
      assert.match(String(bad.body.message), /body\.settings\.endpoint/);
      const noSecret = await api('POST', '', {
        kind: 'splunk_hec',
        name: 'bad',
        settings: { url: receivers.hec.url },
      });
      assert.equal(noSecret.status, 400);
      assert.match(String(noSecret.body.message), /body\.secret_ref/);
      const list0 = await api('GET', '');
      assert.deepEqual((list0.body.data as Json).destinations, [], 'a refused create stores nothing');

      const made = [
        [
          'proto',
          {
            kind: 'otlp_http',
            name: 'otel-proto',
            settings: { endpoint: receivers.proto.url },
            secret_ref: 'otlp-headers',
          },
        ],
        [
          'json',
          {
            kind: 'otlp_http',
            name: 'otel-json',
            settings: { endpoint: receivers.json.url, encoding: 'json' },
          },
        ],
        [
          'hec',
          {
            kind: 'splunk_hec',
            name: 'splunk',
            settings: { url: receivers.hec.url, index: 'acp' },
            secret_ref: 'hec-token',
          },
        ],
        [
          'hook',
          {
            kind: 'webhook',
            name: 'siem-hook',
            settings: { url: `${receivers.hook.url}/in` },
            secret_ref: 'hook-key',
          },
        ],
      ] as const;
      for (const [which, body] of made) {
        const res = await api('POST', '', body);
        assert.equal(res.status, 200, res.text);
        ids[which] = String((res.body.data as Json).id);
      }
      const dup = await api('POST', '', made[0][1]);
      assert.equal(dup.status, 409);
      const list = await api('GET', '');
      assert.equal(((list.body.data as Json).destinations as Json[]).length, 4);
      for (const secret of [HEC_TOKEN, HOOK_KEY, OTLP_KEY]) assert.ok(!list.text.includes(secret));
      assert.deepEqual(
        ((list.body.data as Json).destinations as Json[]).find((d) => d.name === 'otel-json')?.settings,
        { endpoint: receivers.json.url, encoding: 'json', metrics: true },
      );
    });

    test('every stored event reaches each destination, decoded with the official definitions', async () => {
      await ingest(60);
      await deliverAll();
      for (const which of ['proto', 'json'] as const) {
        const r = receivers[which];
        const spans = spanEventIds(r);
        assert.equal(new Set(spans.map((s) => s.spanId)).size, 60, which);
        assert.ok(spans.every((s) => s.name === `tools/call ${s.attributes['gen_ai.tool.name']}`));
        assert.ok(spans.every((s) => s.resource['service.name'] === 'claude-code'));
        const guardrails = r
          .at('/v1/traces')
          .flatMap((q) => decodeOtlpTraces(q.body, String(q.headers['content-type'])))
          .filter((s) => s.name === 'apply_guardrail');
        assert.equal(guardrails.length, 20);
        const points = r
          .at('/v1/metrics')
          .reduce((n, q) => n + decodeOtlpMetricCount(q.body, String(q.headers['content-type'])), 0);
        assert.equal(points, 60);
      }
      assert.ok(receivers.proto.requests.every((q) => q.headers['x-api-key'] === OTLP_KEY));
      assert.ok(
        receivers.proto.requests.every((q) => q.headers['content-type'] === 'application/x-protobuf'),
      );
      assert.ok(receivers.hec.requests.every((q) => q.headers.authorization === `Splunk ${HEC_TOKEN}`));
      const hec = hecEvents();
      assert.deepEqual(new Set(ocsfIds(hec.map((e) => e.event as Json))), new Set(ingested));
      assert.ok(
        hec.every(
          (e) => e.index === 'acp' && typeof e.time === 'number' && (e.event as Json).class_uid === 6003,
        ),
      );
      for (const q of receivers.hook.requests) {
        const body = q.body.toString('utf8');
        assert.ok(
          webhookVerifies(
            HOOK_KEY,
            body,
            String(q.headers['x-acp-signature']),
            String(q.headers['x-acp-timestamp']),
          ),
        );
        assert.ok(
          !webhookVerifies(
            HOOK_KEY,
            body.replace('github', 'GITHUB'),
            String(q.headers['x-acp-signature']),
            String(q.headers['x-acp-timestamp']),
          ),
        );
      }
      assert.deepEqual(new Set(ocsfIds(hookLines())), new Set(ingested));
      const s = await status('hec');
      assert.equal(s.lag_events, 0);
      assert.equal(s.delivered, 60);
    });

    test('an outage builds lag and loses nothing: delivery resumes from the cursor', async () => {
      for (const r of Object.values(receivers)) await r.stop();
      const before = ingested.length;
      await ingest(30);
      for (const which of ['proto', 'hec', 'hook'] as const) {
        await failed(which);
        const s = await status(which);
        assert.equal(s.lag_events, 30, which);
        assert.ok(Number(s.lag_seconds) >= 0);
        assert.equal(s.last_error, 'network error');
        assert.ok(Number(s.attempts) >= 1);
      }
      for (const r of Object.values(receivers)) await r.start();
      await sleep(400);
      await deliverAll();
      const fresh = new Set(ingested.slice(before));
      assert.ok([...fresh].every((id) => ocsfIds(hecEvents().map((e) => e.event as Json)).includes(id)));
      assert.ok([...fresh].every((id) => ocsfIds(hookLines()).includes(id)));
      assert.equal(new Set(spanEventIds(receivers.proto).map((s) => s.spanId)).size, 90);
      assert.equal((await status('hook')).last_error, null);
    });

    test('a batch taken but answered 500 is sent again, and the duplicates are counted', async () => {
      const resentBefore = Number((await status('hook')).resent);
      receivers.hook.answers.push({ status: 500, keep: true });
      await ingest(10);
      await failed('hook');
      assert.equal((await status('hook')).last_status, 500);
      await sleep(400);
      await deliverAll(['hook']);
      const seen = new Map<string, number>();
      for (const id of ocsfIds(hookLines())) seen.set(id, (seen.get(id) ?? 0) + 1);
      const twice = [...seen.values()].filter((n) => n === 2).length;
      assert.equal(twice, 10, 'the receiver holds the batch twice');
      assert.equal(Number((await status('hook')).resent) - resentBefore, 10, 'and the service says so');
    });

    test('429 with Retry-After: the destination waits as long as it was told', async () => {
      receivers.hec.answers.push({ status: 429, headers: { 'retry-after': '2' } });
      const before = hecEvents().length;
      await ingest(5);
      await failed('hec');
      const s = await status('hec');
      assert.equal(s.last_status, 429);
      // From the pass's start (last_attempt_at) to the next try: the 2 s asked for, plus the send itself.
      const wait = Date.parse(String(s.next_attempt_at)) - Date.parse(String(s.last_attempt_at));
      assert.ok(wait >= 2000 && wait < 5000, `waits 2 s (${wait} ms)`);
      if (Date.parse(String(s.next_attempt_at)) - Date.now() > 300) {
        await svc.runSchedule('exportDelivery');
        assert.equal(hecEvents().length, before, 'nothing sent before Retry-After');
      }
      await sleep(Math.max(0, Date.parse(String(s.next_attempt_at)) - Date.now()) + 100);
      await deliverAll(['hec']);
      assert.equal(hecEvents().length, before + 5);
    });

    test('replay from a time sends the range again', async () => {
      await deliverAll(['proto']);
      const before = spanEventIds(receivers.proto).length;
      const res = await api('POST', `/${ids.proto}/replay`, {
        from: new Date(Date.now() - DAY).toISOString(),
      });
      assert.equal(res.status, 200, res.text);
      assert.equal((res.body.data as Json).replayed, ingested.length);
      assert.equal(((res.body.data as Json).status as Json).lag_events, ingested.length);
      await deliverAll(['proto']);
      const spans = spanEventIds(receivers.proto);
      assert.equal(spans.length - before, ingested.length);
      const bad = await api('POST', `/${ids.proto}/replay`, { from: 'yesterday' });
      assert.equal(bad.status, 400);
      assert.match(String(bad.body.message), /body\.from/);
    });

    test('retention keeps a day an enabled destination has not received, and drops it once delivered', async () => {
      await receivers.hook.stop();
      await ingest(3);
      await deliverAll(['proto', 'json', 'hec']);
      await failed('hook');
      await svc.runSchedule('rollupFold');
      const { db } = svc.runtime.database;
      const later = new Date(Date.now() + 400 * DAY);
      const kept = await applyEventRetention(db, svc.runtime.config, later);
      const today = `observability_events_p${new Date().toISOString().slice(0, 10).replaceAll('-', '')}`;
      assert.deepEqual(
        kept.kept.find((k) => k.name === today),
        { name: today, reason: 'undelivered' },
      );
      await receivers.hook.start();
      // A change of settings is tried at the next pass, whatever the backoff said.
      const on = await api('PATCH', `/${ids.hook}`, {
        settings: { url: `${receivers.hook.url}/in`, auth: 'hmac' },
      });
      assert.equal(on.status, 200, on.text);
      await deliverAll(['hook']);
      const run = await applyEventRetention(db, svc.runtime.config, later);
      assert.ok(
        run.dropped.some((d) => d.name === today),
        JSON.stringify(run),
      );
    });

    test('delete removes the destination and its cursor', async () => {
      const res = await api('DELETE', `/${ids.json}`);
      assert.equal(res.status, 200);
      assert.equal((await api('GET', `/${ids.json}`)).status, 404);
    });
  });
}
