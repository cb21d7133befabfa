// The delivery's read (shared/exports/delivery/read.ts), on every driver: each event it hands the mappings is the one
// GET /v1/admin/observability/events/{id} returns, every field alike but the prompt (never exported) and metadata
// over the export's bound (left out, metadata_omitted); and batch after batch it walks the events in (ingest_xid, id)
// order, each once.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type ExportCursor, readBatch } from '#shared/exports/delivery/read.ts';
import type { StoredEvent } from '#shared/exports/source.ts';
import { driversUnderTest } from '#test/support/databases.ts';
import { enrolledDevice, prepare, send } from '#test/support/device-requests.ts';
import { startTestService, type TestService } from '#test/support/service.ts';

type Json = Record<string, unknown>;

for (const driver of driversUnderTest()) {
  describe(`the export read on ${driver}`, () => {
    let svc: TestService;
    let admin: string;

    before(async () => {
      svc = await startTestService(driver, { dashboard_url: 'http://dashboard.test' });
      admin = await svc.adminToken();
      const device = await enrolledDevice(svc.url, admin);
      // Two requests (two transactions), so that the walk crosses from one ingest_xid to the next.
      for (const offset of [0, 7]) {
        const events = Array.from({ length: 7 }, (_, i) => ({
          event_id: randomUUID(),
          event_time: new Date(Date.now() - 60_000 + (offset + i) * 1001).toISOString(),
          agent_type: 'claude-code',
          mcp_name: 'github',
          tool: `tool_${i}`,
          event_type: i % 3 === 2 ? 'error' : 'invocation',
          result: ['allowed', 'denied', 'error'][i % 3],
          ...(i % 3 === 1
            ? { deny_code: 'blocked', rule_applied: 'r1@3', deny_reason: 'not on the list' }
            : {}),
          ...(i % 3 === 2 ? { error_message: 'boom' } : {}),
          session_id: i === 0 ? undefined : `s-${i % 2}`,
          model: 'claude-sonnet-4',
          tokens_in: 10 * i,
          tokens_out: 3 * i,
          duration_ms: 123 * i,
          skills: i === 3 ? ['review', 'ship'] : [],
          prompt: `prompt ${i}`,
          // Over the export's bound (16 KiB of text) on one event, small on the others.
          metadata:
            i === 4 ? { big: 'm'.repeat(20_000) } : { cwd: '/home/dev', n: offset + i, nested: { ok: true } },
        }));
        const res = await send(svc.url, prepare('/v1/devices/events', device, { events }));
        assert.equal(res.status, 200, JSON.stringify(res.body));
      }
    });
    after(async () => {
      await svc?.dispose();
    });

    test('batch after batch, each event as the API returns it, prompt and oversized metadata left out', async () => {
      const db = svc.runtime.database.db;
      const read: StoredEvent[] = [];
      const eventMs = new Map<string, number | undefined>();
      // Only events older than every transaction still running are read: on a shared server, wait for them.
      for (let waited = 0; read.length < 14; waited++) {
        assert.ok(waited < 300, `the read found ${read.length} of 14 events`);
        read.length = 0;
        let cursor: ExportCursor = { xid: '0', id: '0' };
        for (;;) {
          const batch = await readBatch(db, cursor, 4);
          if (!batch.last) break;
          assert.ok(batch.sources.length <= 4);
          read.push(...batch.sources.map((s) => s.event));
          for (const s of batch.sources) eventMs.set(s.event.id, s.event_ms);
          cursor = batch.last;
        }
        if (read.length < 14) await sleep(200);
      }
      assert.equal(new Set(read.map((e) => e.id)).size, 14, 'each event once');
      const ids = read.map((e) => Number(e.id));
      assert.deepEqual(
        ids,
        [...ids].sort((a, b) => a - b),
        'in (ingest_xid, id) order: the first request before the second',
      );
      let omitted = 0;
      for (const event of read) {
        const res = await svc.call('GET', `/v1/admin/observability/events/${event.id}`, { token: admin });
        assert.equal(res.status, 200, res.text);
        const stored = res.body.data as Json;
        assert.notEqual(stored.prompt, null, 'the API holds the prompt');
        const small = Buffer.byteLength(JSON.stringify(stored.metadata)) < 16 * 1024;
        const expected = small
          ? { ...stored, prompt: null }
          : { ...stored, prompt: null, metadata: null, metadata_omitted: true };
        if (!small) omitted++;
        assert.deepEqual(event, expected);
        assert.equal(
          eventMs.get(event.id),
          Date.parse(String(stored.event_time)),
          'event_ms is the event time',
        );
      }
      assert.equal(omitted, 2, 'the two events with metadata over the bound');
    });
  });
}
