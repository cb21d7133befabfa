// Admin observability against a model, on every driver: random batches (fast-check, several seeds) go
// through the ingest path; after each, the stored rollups and series equal a raw recomputation from the events, and
// the summary — on the rollups where they apply and forced onto the raw scan — equals figures computed in JS from the
// events the test ingested, for a matrix of filters (call-key, device, serial, session, actor, group, skill, free
// text), ranges and buckets. On PostgreSQL and the Data API, batches are also ingested in parallel.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import fc from 'fast-check';
import { rng } from '#agent/simulate.ts';
import { connectDatabase } from '#shared/core/db/connect.ts';
import type { Database, Db } from '#shared/core/db/database.ts';
import { migrate } from '#shared/core/db/migrate.ts';
import { queryRows } from '#shared/core/db/query.ts';
import { ingestEvents } from '#shared/devices/events.ts';
import { type ObservabilityEventInput, observabilityEvent } from '#shared/devices/schemas.ts';
import { type DurationSketch, sketchKey, sketchPercentiles } from '#shared/observability/duration-sketch.ts';
import { type FoldResult, foldRollups, rebuildRollups } from '#shared/observability/rollups/rollups.ts';
import { summaryQuery } from '#shared/observability/schemas.ts';
import { observabilitySummary } from '#shared/observability/summary/summary.ts';
import { driversUnderTest, type ProvisionedDatabase, provisionDatabase } from '#test/support/databases.ts';
import { assertRollupsEqualRecomputation as assertRollups } from '#test/support/rollups.ts';
import { testConfig } from '#test/support/service.ts';
import { verifiedDevice } from '#test/support/verified-device.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const NOW = Math.floor(Date.now() / 60_000) * 60_000 - 17_000; // not on a bucket boundary

// Small domains so that filters match something; lowercase alphanumerics sort alike in every collation.
const AGENTS = ['claude', 'cursor', 'copilot'] as const;
const MCPS = ['github', 'files', 'pg'] as const;
const TOOLS = ['a1', 'b2', 'c3'] as const;
const MODELS = ['m1', 'm2'] as const;
const ACTORS = ['p@x.test', 'q@x.test', 'r@x.test'] as const;
const GROUPS = ['g1', 'g2'] as const;
const DENIES = [
  { deny_code: 'x1', rule_applied: 'r1', deny_reason: 'blocked by policy ALPHA' },
  { deny_code: 'y2', rule_applied: 'r2', deny_reason: 'over the 50% quota' },
] as const;
const ERRORS = ['timeout talking to beta', 'ECONNRESET'] as const;
const SKILLS = ['review', 'sql', 'deploy'] as const;
const SESSIONS = ['s1', 's2', 's3', 's4'] as const;

interface Stored {
  device: number;
  e: ObservabilityEventInput;
  t: number;
}

const eventArb = fc
  .record({
    ago: fc.integer({ min: 0, max: 3 * DAY }),
    agent: fc.constantFrom(...AGENTS),
    mcp: fc.constantFrom(...MCPS),
    tool: fc.constantFrom(...TOOLS),
    kind: fc.constantFrom('allowed', 'allowed', 'allowed', 'denied', 'error'),
    type: fc.constantFrom('invocation', 'result'),
    deny: fc.constantFrom(...DENIES),
    error: fc.constantFrom(...ERRORS),
    model: fc.option(fc.constantFrom(...MODELS), { nil: undefined }),
    actor: fc.option(fc.constantFrom(...ACTORS), { freq: 5, nil: undefined }),
    group: fc.option(fc.constantFrom(...GROUPS), { freq: 5, nil: undefined }),
    session: fc.option(fc.constantFrom(...SESSIONS), { nil: undefined }),
    skills: fc.subarray([...SKILLS], { maxLength: 2 }),
    tokensIn: fc.integer({ min: 0, max: 5000 }),
    tokensOut: fc.integer({ min: 0, max: 500 }),
    duration: fc.oneof(fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: 60_000 })),
  })
  .map((r) =>
    observabilityEvent.parse({
      event_id: randomUUID(),
      event_time: new Date(NOW - r.ago).toISOString(),
      agent_type: r.agent,
      mcp_name: r.mcp,
      tool: r.tool,
      event_type: r.kind === 'error' ? 'error' : r.type,
      result: r.kind,
      ...(r.kind === 'denied' ? r.deny : {}),
      ...(r.kind === 'error' ? { error_message: r.error } : {}),
      model: r.model,
      actor_email: r.actor,
      group: r.group,
      session_id: r.session,
      skills: r.skills,
      tokens_in: r.tokensIn,
      tokens_out: r.tokensOut,
      duration_ms: r.duration,
    }),
  );

/** Batches of events for random devices; some events repeat (same event_id) inside and across batches. */
const batchesArb = fc.array(
  fc.record({
    device: fc.integer({ min: 0, max: 2 }),
    events: fc.array(eventArb, { minLength: 1, maxLength: 30 }),
    repeatFirst: fc.boolean(),
  }),
  { minLength: 1, maxLength: 3 },
);

// ---- the model: the summary's figures computed in JS from the ingested events ----

type Filters = Record<string, string | undefined>;
type Query = Filters & { from?: string; to?: string; bucket?: 'minute' | 'hour' | 'day'; top?: string };

const STEP = { minute: 60_000, hour: HOUR, day: DAY } as const;
const floorTo = (t: number, s: number) => Math.floor(t / s) * s;
const ceilTo = (t: number, s: number) => Math.ceil(t / s) * s;
const alignTo = (from: number, to: number, s: number) => {
  const f = floorTo(from, s);
  return { from: f, to: Math.max(ceilTo(to, s), f + s) };
};

function matches(s: Stored, f: Filters, serials: string[], ids: string[]): boolean {
  const e = s.e;
  const eq = (v: string | undefined, want: string | undefined) => want === undefined || v === want;
  const q = f.q?.toLowerCase();
  return (
    eq(e.agent_type, f.agent_type) &&
    eq(e.mcp_name, f.mcp) &&
    eq(e.tool, f.tool) &&
    eq(e.event_type, f.event_type) &&
    eq(e.result, f.result) &&
    eq(e.deny_code, f.deny_code) &&
    eq(e.rule_applied, f.rule) &&
    eq(e.model, f.model) &&
    eq(e.actor_email, f.actor) &&
    eq(e.group, f.group) &&
    eq(e.session_id, f.session_id) &&
    eq(ids[s.device], f.device_id) &&
    eq(serials[s.device], f.serial) &&
    (f.skill === undefined || e.skills.includes(f.skill)) &&
    (q === undefined ||
      Boolean(e.deny_reason?.toLowerCase().includes(q) || e.error_message?.toLowerCase().includes(q)))
  );
}

interface Agg {
  calls: number;
  denied: number;
  errors: number;
  tokens_in: number;
  tokens_out: number;
  sum: number;
  max: number;
  /** Count per sketch key (sketchKey). */
  sketch: Map<number, number>;
}
const emptyAgg = (): Agg => ({
  calls: 0,
  denied: 0,
  errors: 0,
  tokens_in: 0,
  tokens_out: 0,
  sum: 0,
  max: 0,
  sketch: new Map(),
});
function add(a: Agg, e: ObservabilityEventInput) {
  a.calls++;
  if (e.result === 'denied') a.denied++;
  if (e.result === 'error') a.errors++;
  a.tokens_in += e.tokens_in;
  a.tokens_out += e.tokens_out;
  a.sum += e.duration_ms;
  a.max = Math.max(a.max, e.duration_ms);
  const k = sketchKey(e.duration_ms);
  a.sketch.set(k, (a.sketch.get(k) ?? 0) + 1);
}
const sketchOf = (a: Agg): DurationSketch => {
  const keys = [...a.sketch.keys()].sort((x, y) => x - y);
  return keys.length ? [keys, keys.map((k) => a.sketch.get(k) as number)] : null;
};
/** p50, p95 and p99 of the model's sketch, each checked within 2 % of percentile_cont over the durations. */
function modelPercentiles(a: Agg, durations: number[]) {
  const [p50, p95, p99] = sketchPercentiles(sketchOf(a), [0.5, 0.95, 0.99], a.max);
  const sorted = [...durations].sort((x, y) => x - y);
  [0.5, 0.95, 0.99].forEach((p, i) => {
    if (sorted.length === 0) return;
    const h = p * (sorted.length - 1);
    const lo = sorted[Math.floor(h)] as number;
    const exact = lo + (h - Math.floor(h)) * ((sorted[Math.ceil(h)] as number) - lo);
    const got = [p50, p95, p99][i] as number;
    assert.ok(exact === 0 ? got === 0 : Math.abs(got - exact) / exact <= 0.02, `p${p}: ${got} vs ${exact}`);
  });
  return { duration_p50_ms: p50 ?? null, duration_p95_ms: p95 ?? null, duration_p99_ms: p99 ?? null };
}
/** The summary with its percentiles to 9 significant digits: SQL's power() and JavaScript's ** may differ in the last bit. */
const rounded = (value: unknown): unknown =>
  JSON.parse(
    JSON.stringify(value, (k, v) =>
      /^duration_p\d\d_ms$/.test(k) && typeof v === 'number' ? Number(v.toPrecision(9)) : v,
    ),
  );
const rate = (n: number, d: number) => (d ? Number((n / d).toFixed(4)) : 0);

function topList(
  events: ObservabilityEventInput[],
  keys: Record<string, (e: ObservabilityEventInput) => string>,
  n: number,
  percentiles = false,
) {
  const groups = new Map<string, { key: Record<string, string>; agg: Agg }>();
  for (const e of events) {
    const key = Object.fromEntries(Object.entries(keys).map(([k, f]) => [k, f(e)]));
    if (Object.values(key).some((v) => v === '')) continue;
    const id = JSON.stringify(Object.values(key));
    const g = groups.get(id) ?? { key, agg: emptyAgg() };
    add(g.agg, e);
    groups.set(id, g);
  }
  const durations = new Map<string, number[]>();
  for (const e of events) {
    const id = JSON.stringify(Object.values(keys).map((f) => f(e)));
    durations.set(id, [...(durations.get(id) ?? []), e.duration_ms]);
  }
  return [...groups.values()]
    .sort((x, y) => {
      if (x.agg.calls !== y.agg.calls) return y.agg.calls - x.agg.calls;
      for (const k of Object.keys(keys)) {
        const a = x.key[k] as string;
        const b = y.key[k] as string;
        if (a !== b) return a < b ? -1 : 1;
      }
      return 0;
    })
    .slice(0, n)
    .map(({ key, agg }) => ({
      ...key,
      calls: agg.calls,
      denied: agg.denied,
      errors: agg.errors,
      tokens_in: agg.tokens_in,
      tokens_out: agg.tokens_out,
      deny_rate: rate(agg.denied, agg.calls),
      duration_avg_ms: agg.calls ? Math.round(agg.sum / agg.calls) : null,
      duration_max_ms: agg.max,
      ...(percentiles ? modelPercentiles(agg, durations.get(JSON.stringify(Object.values(key))) ?? []) : {}),
    }));
}

/** The duration percentiles of a series bucket's durations, as the model's sketch gives them. */
function bucketPercentiles(durations: number[]) {
  const agg = emptyAgg();
  for (const duration_ms of durations)
    add(agg, { duration_ms, result: 'allowed', tokens_in: 0, tokens_out: 0 } as ObservabilityEventInput);
  return modelPercentiles(agg, durations);
}

function expectedSummary(stored: Stored[], query: Query, serials: string[], ids: string[]) {
  const to = query.to ? Date.parse(query.to) : NOW;
  const from = query.from ? Date.parse(query.from) : to - DAY;
  const bucket = query.bucket ?? (to - from <= 2 * DAY ? 'hour' : 'day');
  const range = alignTo(from, to, bucket === 'day' ? DAY : HOUR);
  const actorRange = alignTo(from, to, DAY);
  const top = Number(query.top ?? 10);
  const { from: _f, to: _t, bucket: _b, top: _n, ...filters } = query;
  const selected = stored.filter((s) => matches(s, filters, serials, ids));
  const inRange = selected.filter((s) => s.t >= range.from && s.t < range.to).map((s) => s.e);
  const inActorRange = selected.filter((s) => s.t >= actorRange.from && s.t < actorRange.to).map((s) => s.e);
  const total = emptyAgg();
  for (const e of inRange) add(total, e);
  const count = (f: (e: ObservabilityEventInput) => boolean) => inRange.filter(f).length;
  const series = [];
  for (let b = range.from; b < range.to; b += STEP[bucket]) {
    const point = inRange.filter((e) => {
      const t = Date.parse(e.event_time);
      return t >= b && t < b + STEP[bucket];
    });
    series.push({
      bucket: new Date(b).toISOString().replace('.000Z', 'Z'),
      calls: point.length,
      denied: point.filter((e) => e.result === 'denied').length,
      errors: point.filter((e) => e.result === 'error').length,
      tokens_in: point.reduce((n, e) => n + e.tokens_in, 0),
      tokens_out: point.reduce((n, e) => n + e.tokens_out, 0),
      ...bucketPercentiles(point.map((e) => e.duration_ms)),
    });
  }
  const denied = inRange.filter((e) => e.result === 'denied');
  return {
    range: { from: new Date(range.from).toISOString(), to: new Date(range.to).toISOString(), bucket },
    actor_range: { from: new Date(actorRange.from).toISOString(), to: new Date(actorRange.to).toISOString() },
    filters: Object.fromEntries(Object.entries(filters).filter(([, v]) => v !== undefined)),
    totals: {
      calls: total.calls,
      by_result: {
        allowed: count((e) => e.result === 'allowed'),
        denied: count((e) => e.result === 'denied'),
        error: count((e) => e.result === 'error'),
      },
      by_event_type: {
        invocation: count((e) => e.event_type === 'invocation'),
        result: count((e) => e.event_type === 'result'),
        error: count((e) => e.event_type === 'error'),
      },
      denied: total.denied,
      errors: total.errors,
      deny_rate: rate(total.denied, total.calls),
      error_rate: rate(total.errors, total.calls),
      tokens_in: total.tokens_in,
      tokens_out: total.tokens_out,
      duration_avg_ms: total.calls ? Math.round(total.sum / total.calls) : null,
      ...modelPercentiles(
        total,
        inRange.map((e) => e.duration_ms),
      ),
      duration_max_ms: total.max,
    },
    top: {
      tools: topList(inRange, { mcp_name: (e) => e.mcp_name, tool: (e) => e.tool }, top, true),
      mcps: topList(inRange, { mcp_name: (e) => e.mcp_name }, top),
      agents: topList(inRange, { agent_type: (e) => e.agent_type }, top),
      actors: topList(inActorRange, { actor_email: (e) => e.actor_email ?? '' }, top),
      models: topList(inRange, { model: (e) => e.model ?? '' }, top),
      deny_codes: topList(
        denied,
        { deny_code: (e) => e.deny_code ?? '', rule_applied: (e) => e.rule_applied ?? '' },
        top,
      ),
      rules: topList(denied, { rule_applied: (e) => e.rule_applied ?? '' }, top),
    },
    top_truncated: [],
    series,
  };
}

/** The filter matrix: each filter alone (a value that matches), a few pairs, over several ranges and buckets. */
function queries(ids: string[], serials: string[]): Query[] {
  const iso = (t: number) => new Date(t).toISOString();
  const filters: Filters[] = [
    {},
    { agent_type: 'cursor' },
    { mcp: 'github', tool: 'b2' },
    { event_type: 'result' },
    { result: 'denied' },
    { event_type: 'error', result: 'error' },
    { deny_code: 'x1' },
    { rule: 'r2' },
    { model: 'm1', result: 'allowed' },
    { device_id: ids[1] },
    { serial: serials[2] },
    { session_id: 's2' },
    { actor: 'q@x.test' },
    { group: 'g2' },
    { actor: 'p@x.test', group: 'g1' },
    { skill: 'sql' },
    { q: 'alpha' },
    { q: '50%' },
    { agent_type: 'claude', actor: 'r@x.test' },
    { tool: 'nothing-matches' },
  ];
  const ranges: Query[] = [
    {},
    { from: iso(NOW - 3 * DAY - HOUR), bucket: 'day' },
    { from: iso(NOW - 2 * DAY), to: iso(NOW - 5 * HOUR), bucket: 'hour' },
    { from: iso(NOW - 3 * HOUR), bucket: 'minute' },
  ];
  const out: Query[] = [];
  filters.forEach((f, i) => {
    // Every filter over the default range; the others cycle through the remaining ranges.
    out.push({ ...f });
    out.push({ ...f, ...ranges[1 + (i % 3)] });
  });
  out.push({ top: '2', from: iso(NOW - 3 * DAY - HOUR) });
  return out;
}

for (const driver of driversUnderTest()) {
  describe(`observability model on ${driver}`, () => {
    let provisioned: ProvisionedDatabase;
    let database: Database;
    let db: Db;
    const config = testConfig({ events: { max_batch: 1000, prompt_max_chars: 64 } });
    const ids: string[] = [];
    const serials = ['MODEL-0', 'MODEL-1', 'MODEL-2'];
    const stored: Stored[] = [];
    const seen = new Set<string>();

    before(async () => {
      provisioned = await provisionDatabase(driver);
      database = await connectDatabase(testConfig({ db: { dsn: provisioned.dsn } }));
      db = database.db;
      await migrate(db);
      for (const serial of serials) {
        const [row] = await queryRows(
          db,
          sql`INSERT INTO devices (serial_number, brand, model, owner_subject, owner_email, certificate_fingerprint,
              certificate_pem, key_type, cert_not_before, cert_not_after)
            VALUES (${serial}, 'B', 'M', 'sub', 'o@x.test', ${`fp-${serial}`}, 'pem', 'p256', now(),
              now() + interval '1 day')
            RETURNING id::text AS id`,
        );
        ids.push(String(row?.id));
      }
    });
    after(async () => {
      await database?.close();
      await provisioned?.cleanup();
    });

    /** Ingests through ingestEvents (one statement per batch) and records in the model what it stores. */
    const ingest = async (device: number, events: ObservabilityEventInput[]) => {
      const res = await ingestEvents(db, config, verifiedDevice(`fp-${serials[device]}`), events, '10.0.0.1');
      let accepted = 0;
      for (const e of events) {
        const key = `${device}/${e.event_id}`;
        if (seen.has(key)) continue;
        seen.add(key);
        stored.push({ device, e, t: Date.parse(e.event_time) });
        accepted++;
      }
      assert.equal(res.accepted, accepted, 'accepted = events not seen before for the device');
    };

    const assertRollupsEqualRecomputation = () => assertRollups(db);

    const assertSummariesEqualModel = async () => {
      for (const q of queries(ids, serials)) {
        const parsed = summaryQuery.parse(q);
        const expected = expectedSummary(stored, q, serials, ids);
        for (const source of ['auto', 'raw'] as const) {
          const { source: used, ...got } = await observabilitySummary(db, parsed, {
            now: new Date(NOW),
            source,
          });
          assert.deepEqual(
            rounded(got),
            rounded(expected),
            `${source} ${JSON.stringify(q)} (${JSON.stringify(used)})`,
          );
          if (source === 'raw')
            assert.deepEqual(used, { calls: 'events', series: 'events', actors: 'events' });
        }
      }
    };

    test('random batches: rollups = recomputation and every summary = the model, rollup and raw paths (several seeds)', async () => {
      for (const seed of [11, 22, 33]) {
        await fc.assert(
          fc.asyncProperty(batchesArb, async (batches) => {
            for (const b of batches) {
              const events = b.repeatFirst
                ? [...b.events, { ...(b.events[0] as ObservabilityEventInput) }]
                : b.events;
              await ingest(b.device, events);
              // A batch repeating an event already stored: counted as a duplicate, nothing changes.
              await ingest(b.device, [b.events[0] as ObservabilityEventInput]);
            }
            await assertRollupsEqualRecomputation();
            await assertSummariesEqualModel();
          }),
          { seed, numRuns: 2, endOnFailure: true },
        );
      }
      assert.ok(stored.length > 20);
    });

    // Reads never fold: each adds the events the fold has not reached (the tail) to the rollups in its statement.
    test('reads add the unfolded events: summaries = the model before, during and after the fold, and write nothing', async () => {
      const state = () =>
        queryRows(
          db,
          sql`SELECT (SELECT row(next_xid, pending_xids, events_folded)::text FROM observability_fold_state)
            || (SELECT count(*)::text || '/' || coalesce(sum(calls), 0)::text FROM observability_rollups)
            || (SELECT count(*)::text || '/' || coalesce(sum(calls), 0)::text FROM observability_series)
            || (SELECT count(*)::text || '/' || coalesce(sum(calls), 0)::text FROM observability_series_totals) AS s`,
        );
      const batches = fc.sample(fc.array(eventArb, { minLength: 5, maxLength: 25 }), {
        seed: 21,
        numRuns: 6,
      });
      for (const [i, events] of batches.entries()) await ingest(i % 3, events);
      const before = await state();
      await assertSummariesEqualModel();
      assert.deepEqual(await state(), before, 'a read changed the rollups or the fold watermark');
      // Part folded, part in the tail.
      assert.equal((await foldRollups(db, { maxEvents: 20 })).more, true);
      await assertSummariesEqualModel();
      await assertRollupsEqualRecomputation();
      await assertSummariesEqualModel();
    });

    test('the rollup path serves call-key filters, the series table event type / result, the raw path the rest', async () => {
      const source = async (q: Query) =>
        (await observabilitySummary(db, summaryQuery.parse(q), { now: new Date(NOW) })).source;
      assert.deepEqual(await source({}), { calls: 'rollups', series: 'series', actors: 'rollups' });
      assert.deepEqual(await source({ result: 'denied', bucket: 'minute' }), {
        calls: 'rollups',
        series: 'series',
        actors: 'events',
      });
      assert.deepEqual(await source({ agent_type: 'cursor' }), {
        calls: 'rollups',
        series: 'rollups',
        actors: 'events',
      });
      assert.deepEqual(await source({ agent_type: 'cursor', bucket: 'minute' }), {
        calls: 'rollups',
        series: 'events',
        actors: 'events',
      });
      assert.deepEqual(await source({ actor: 'p@x.test' }), {
        calls: 'events',
        series: 'events',
        actors: 'rollups',
      });
      for (const f of [{ device_id: ids[0] }, { serial: serials[0] }, { skill: 'sql' }, { q: 'x' }]) {
        assert.deepEqual(await source(f), { calls: 'events', series: 'events', actors: 'events' });
      }
    });

    // On PostgreSQL and the Data API these are concurrent transactions storing events for the same rollup rows;
    // PGlite runs them one after another.
    test('batches ingested in parallel keep rollups = recomputation and summaries = the model', async () => {
      const batches = fc.sample(fc.array(eventArb, { minLength: 20, maxLength: 60 }), {
        seed: 5,
        numRuns: 8,
      });
      // Several batches per device and every device at once: the same rollup keys are upserted concurrently.
      await Promise.all(batches.map((events, i) => ingest(i % 3, events)));
      await assertRollupsEqualRecomputation();
      await assertSummariesEqualModel();
    });

    test('a backlog folds in bounded calls of whole transactions, every event once', async () => {
      const batches = fc.sample(fc.array(eventArb, { minLength: 4, maxLength: 12 }), { seed: 7, numRuns: 6 });
      for (const [i, events] of batches.entries()) await ingest(i % 3, events);
      const total = batches.reduce((n, events) => n + events.length, 0);
      const bound = 15;
      const calls: FoldResult[] = [];
      for (;;) {
        const result = await foldRollups(db, { maxEvents: bound });
        calls.push(result);
        if (!result.more) break;
      }
      // Each call stops at the transaction that would pass the bound, so it folds at most `bound` (every batch here
      // is smaller), and at least one batch while more are waiting.
      assert.ok(calls.length >= Math.ceil(total / bound), JSON.stringify(calls));
      for (const call of calls.slice(0, -1)) {
        assert.ok(call.folded > 0 && call.folded <= bound, JSON.stringify(calls));
        assert.equal(call.more, true);
      }
      assert.equal(
        calls.reduce((n, call) => n + call.folded, 0),
        total,
      );
      assert.deepEqual(await foldRollups(db, { maxEvents: bound }), { folded: 0, more: false });
      await assertRollupsEqualRecomputation();
      await assertSummariesEqualModel();
    });

    // The random batches spread a few events over three days, so most buckets hold one event (whose percentiles are
    // its duration); here hundreds share a few minutes and an hour, with durations across the whole histogram.
    test("dense buckets: each point's p50 / p95 / p99 = the model, minute and hour, series / rollups / events", async () => {
      const r = rng(13);
      const dense = fc.sample(eventArb, { seed: 12, numRuns: 600 }).map((e, i) =>
        observabilityEvent.parse({
          ...e,
          // Minutes 4 to 7 before NOW, and an hour earlier.
          event_time: new Date(
            NOW - (i % 5 === 4 ? HOUR + 60_000 * (i % 30) : 60_000 * (4 + (i % 4))),
          ).toISOString(),
          duration_ms: Math.round(1.25 ** (r() * 48)) - 1,
        }),
      );
      for (let i = 0; i < dense.length; i += 200) await ingest(i % 3, dense.slice(i, i + 200));
      await assertRollupsEqualRecomputation();
      await assertSummariesEqualModel();
      const sources = new Set<string>();
      let spread = 0;
      for (const bucket of ['minute', 'hour'] as const) {
        for (const f of [{}, { result: 'allowed' }, { mcp: 'github' }, { session_id: 's1' }] as Filters[]) {
          const q = { ...f, from: new Date(NOW - 2 * HOUR).toISOString(), bucket };
          const got = await observabilitySummary(db, summaryQuery.parse(q), { now: new Date(NOW) });
          sources.add(`${bucket} ${got.source.series}`);
          assert.deepEqual(got.series, expectedSummary(stored, q, serials, ids).series, JSON.stringify(q));
          for (const p of got.series) {
            if (p.calls === 0)
              assert.deepEqual([p.duration_p50_ms, p.duration_p95_ms, p.duration_p99_ms], [null, null, null]);
            else if (
              p.calls >= 100 &&
              (p.duration_p50_ms ?? 0) < (p.duration_p95_ms ?? 0) &&
              (p.duration_p95_ms ?? 0) < (p.duration_p99_ms ?? 0)
            )
              spread++;
          }
        }
      }
      assert.deepEqual([...sources].sort(), [
        'hour events',
        'hour rollups',
        'hour series',
        'minute events',
        'minute series',
      ]);
      assert.ok(spread >= 4, `buckets of 100+ calls with p50 < p95 < p99: ${spread}`);
    });

    // Last: the bulk-loaded rows are not in the JS model.
    test('a bulk load and rebuildRollups, then more batches: each event is counted once', async () => {
      await ingest(1, fc.sample(eventArb, { seed: 9, numRuns: 15 }));
      // Rows inserted outside ingest_events (no ingest_xid), as a backfill would; then the rebuild covers them all.
      await db.execute(sql`INSERT INTO observability_events (device_id, serial_number, event_time, agent_type,
          mcp_name, tool, event_type, result, tokens_in, tokens_out, duration_ms)
        SELECT device_id, serial_number, event_time, agent_type, mcp_name, tool, event_type, result, tokens_in,
          tokens_out, duration_ms FROM observability_events ORDER BY id LIMIT 40`);
      await rebuildRollups(db);
      // The watermark moved past every event the rebuild counted: the fold finds nothing left.
      assert.equal((await foldRollups(db)).folded, 0);
      await assertRollupsEqualRecomputation();
      await ingest(2, fc.sample(eventArb, { seed: 10, numRuns: 12 }));
      assert.equal((await foldRollups(db)).folded, 12);
      await assertRollupsEqualRecomputation();
    });
  });
}
