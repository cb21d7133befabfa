// npm run bench:ingest — the device ingest path, measured against baselines in the same run:
//  1. events/s stored through the events handler (the Lambda export of functions/devices/events.ts, invoked
//     directly with the API Gateway payload 2.0 event the local emulator builds, local-server/api-gateway.ts
//     toEvent), for batches of 1, 100 and 1000, on PGlite and on PostgreSQL (a fresh database on
//     TEST_DATABASE_URL, else on a PostgreSQL from npm started for the run, dropped after), as a ratio to
//     (a) drizzle's multi-row .values() insert of the same rows and (b) COPY FROM STDIN of the same rows (pg's
//     copy-in protocol through a custom submittable; on PGlite, COPY FROM '/dev/blob'). The handler stores events
//     only; their rollups are folded later (observability_fold(), on a schedule and before every read), so the run
//     also times one fold of all the handler's events of each batch size and prints handler + fold together.
//  2. per-request signature verification (verifySignedDeviceRequest as the device authenticator calls it) as a
//     ratio to a bare crypto.verify of the same bytes with a cached key, small and large bodies, both key types.
//  3. Data API calls per request of register, inventory and events, counted by test/support/data-api-server.ts.
//  4. ingest's rate on PostgreSQL with an OTLP export running beside it, against ingest alone in the same run
//     (export-beside.ts: windows of BENCH_EXPORT_INGEST_SECONDS, alternated BENCH_EXPORT_ROUNDS times).
// Each goal prints PASS or FAIL. BENCH_QUICK=1 runs fewer rounds.

import { createPublicKey, randomUUID, verify } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import pg from 'pg';
import { type AgentReport, signBytes, type ToolCallEvent } from '#agent/client.ts';
import { createDeviceIdentity, type DeviceIdentity } from '#agent/identity.ts';
import { rng, simulatedEvents, simulatedInventory } from '#agent/simulate.ts';
import { lambdaContext, toEvent } from '#local-server/api-gateway.ts';
import { issueLocalToken } from '#shared/core/auth/local-tokens.ts';
import { canonicalBytes } from '#shared/core/canonical-json.ts';
import type { Config } from '#shared/core/config/schema.ts';
import type { Db } from '#shared/core/db/database.ts';
import { migrate } from '#shared/core/db/migrate.ts';
import { observabilityEvents } from '#shared/core/db/schema.ts';
import { setLogLevel } from '#shared/core/logger.ts';
import { createRuntime, type Runtime, setRuntime } from '#shared/core/runtime.ts';
import { truncateText } from '#shared/devices/events.ts';
import { parseDeviceCertificate } from '#shared/devices/signing/certificate.ts';
import { decodeSignature } from '#shared/devices/signing/signature.ts';
import { verifySignedDeviceRequest } from '#shared/devices/signing/verify-request.ts';
import { createUser, findUserByEmail } from '#shared/identity/users.ts';
import { foldBacklog } from '#shared/observability/rollups/rollups.ts';
import { createPostgresDatabase, useBenchDatabase } from '#test/support/databases.ts';
import { testConfig } from '#test/support/service.ts';
import { ingestBesideExport } from './export-beside.ts';
import { insertBenchDevice, openBenchDatabase } from './seed-events.ts';

await useBenchDatabase();
setLogLevel('error');
const QUICK = process.env.BENCH_QUICK === '1';
/** BENCH_PARTS=ingest,verify,calls,export (default: all) runs only those parts. */
const PARTS = new Set(
  (process.env.BENCH_PARTS ?? 'ingest,verify,calls,export').split(',').map((p) => p.trim()),
);
const DASHBOARD = 'http://dashboard.bench';

type Handler = (
  event: APIGatewayProxyEventV2,
  context: unknown,
) => Promise<APIGatewayProxyStructuredResultV2>;
const load = async (name: string) =>
  ((await import(`#functions/devices/${name}.ts`)) as { handler: Handler }).handler;
const handlers = {
  register: await load('register'),
  inventory: await load('inventory'),
  events: await load('events'),
};

const goals: Array<{ goal: string; measured: string; pass: boolean }> = [];
const goal = (name: string, measured: string, pass: boolean) => goals.push({ goal: name, measured, pass });

// --- requests as an agent sends them, turned into the event API Gateway hands the Lambda ---

function apiEvent(path: string, headers: Record<string, string>, body: string): APIGatewayProxyEventV2 {
  const req = {
    url: path,
    method: 'POST',
    httpVersion: '1.1',
    headers: { host: 'api.bench', 'content-length': String(Buffer.byteLength(body)), ...headers },
    socket: { remoteAddress: '203.0.113.7' },
  } as unknown as IncomingMessage;
  return toEvent(req, Buffer.from(body), `POST ${path}`, {}, randomUUID());
}

/** A signed request as the reference agent builds it: the canonical bytes it signed are the body it sends. */
function signedEvent(
  identity: DeviceIdentity,
  path: string,
  fields: Record<string, unknown>,
  token?: string,
) {
  const body = { ...fields, certificate: identity.certificatePem, clientTimestamp: new Date().toISOString() };
  const canonical = canonicalBytes(body);
  const signature = signBytes(identity, canonical);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  if (path.endsWith('/register')) return apiEvent(path, headers, JSON.stringify({ ...body, signature }));
  headers['x-device-signature'] = signature;
  return apiEvent(path, headers, canonical.toString('utf8'));
}

async function invoke(handler: Handler, event: APIGatewayProxyEventV2) {
  const result = await handler(event, lambdaContext('bench', randomUUID()));
  const body = result.body ? (JSON.parse(result.body) as Record<string, unknown>) : {};
  if ((result.statusCode ?? 0) >= 300) throw new Error(`${result.statusCode} ${JSON.stringify(body)}`);
  return body;
}

/** The person the bench devices are enrolled by (register reads them from the users table). */
let benchUserId = '';

async function startRuntime(config: Config): Promise<Runtime> {
  const runtime = await createRuntime(config);
  await migrate(runtime.database.db);
  const user =
    (await findUserByEmail(runtime.database.db, 'bench@example.test')) ??
    (await createUser(
      runtime.database.db,
      { email: 'bench@example.test', name: 'Bench', password: randomUUID(), roles: ['user'] },
      { id: 'bench', email: 'bench', ipAddress: '' },
    ));
  benchUserId = user.id;
  setRuntime(runtime);
  return runtime;
}

/** The CLI sign-in token a bench device registers with. */
const enrollmentToken = async (config: Config) =>
  (
    await issueLocalToken(config, {
      subject: benchUserId,
      email: 'bench@example.test',
      name: 'Bench',
      roles: ['user'],
      tokenUse: 'cli',
    })
  ).access_token;

async function enroll(config: Config) {
  const token = await enrollmentToken(config);
  const identity = await createDeviceIdentity('p256');
  const hardware = { serialNumber: `BENCH-${randomUUID().slice(0, 8)}`, brand: 'Lenovo', model: 'X1' };
  const reg = await invoke(
    handlers.register,
    signedEvent(identity, '/v1/devices/register', { ...hardware, ownerEmail: '' }, token),
  );
  return { token, identity, deviceId: reg.deviceId as string, serialNumber: hardware.serialNumber };
}

// --- the rows the handler stores, for the baselines ---

const r = rng(7);
const inventory = simulatedInventory(r);
const now = new Date();
const makeEvents = (n: number): ToolCallEvent[] =>
  simulatedEvents(r, inventory, n, {
    actorEmail: 'bench@example.test',
    from: new Date(now.getTime() - 3_600_000),
    to: now,
  }).map((e) => ({ ...e, event_id: randomUUID() }));

function storedRows(events: ToolCallEvent[], deviceId: string, serialNumber: string) {
  const receivedAt = new Date();
  return events.map((e) => {
    const { text: prompt, truncated } = truncateText(e.prompt ?? undefined, 4096);
    return {
      eventId: e.event_id ?? null,
      deviceId,
      serialNumber,
      sourceIp: '203.0.113.7',
      receivedAt,
      eventTime: new Date(e.event_time),
      agentType: e.agent_type,
      mcpName: e.mcp_name,
      tool: e.tool,
      eventType: e.event_type,
      result: e.result,
      denyCode: e.deny_code ?? null,
      denyReason: e.deny_reason ?? null,
      errorMessage: e.error_message ?? null,
      ruleApplied: e.rule_applied ?? null,
      model: e.model ?? null,
      sessionId: e.session_id ?? null,
      group: e.group ?? null,
      actorEmail: e.actor_email ?? null,
      tokensIn: e.tokens_in ?? 0,
      tokensOut: e.tokens_out ?? 0,
      durationMs: e.duration_ms ?? 0,
      skills: e.skills ?? [],
      prompt,
      promptTruncated: truncated,
      metadata: e.metadata ?? {},
    };
  });
}
type StoredRow = ReturnType<typeof storedRows>[number];

const COPY_COLUMNS =
  'event_id, device_id, serial_number, source_ip, received_at, event_time, agent_type, mcp_name, tool, ' +
  'event_type, result, deny_code, deny_reason, error_message, rule_applied, model, session_id, group_name, ' +
  'actor_email, tokens_in, tokens_out, duration_ms, skills, prompt, prompt_truncated, metadata';
const COPY_SQL = (source: string) =>
  `COPY observability_events (${COPY_COLUMNS}) FROM ${source} WITH (FORMAT csv)`;

const csvField = (v: unknown): string => {
  if (v === null || v === undefined) return '';
  const text =
    v instanceof Date ? v.toISOString() : typeof v === 'object' ? JSON.stringify(v) : String(v as string);
  return `"${text.replace(/"/g, '""')}"`;
};
function toCsv(rows: StoredRow[]): string {
  let out = '';
  for (const x of rows) {
    out += `${[
      x.eventId,
      x.deviceId,
      x.serialNumber,
      x.sourceIp,
      x.receivedAt,
      x.eventTime,
      x.agentType,
      x.mcpName,
      x.tool,
      x.eventType,
      x.result,
      x.denyCode,
      x.denyReason,
      x.errorMessage,
      x.ruleApplied,
      x.model,
      x.sessionId,
      x.group,
      x.actorEmail,
      x.tokensIn,
      x.tokensOut,
      x.durationMs,
      x.skills,
      x.prompt,
      x.promptTruncated,
      x.metadata,
    ]
      .map(csvField)
      .join(',')}\n`;
  }
  return out;
}

/**
 * COPY ... FROM STDIN over node-postgres without pg-copy-streams: a submittable that answers the server's
 * CopyInResponse with one CopyData message and CopyDone (the messages pg's Connection already serializes).
 */
class CopyFromStdin {
  callback?: (err: Error | null) => void;
  private error: Error | null = null;
  private readonly text: string;
  private readonly data: Buffer;
  constructor(text: string, data: Buffer) {
    this.text = text;
    this.data = data;
  }
  submit(connection: { query(text: string): void }) {
    connection.query(this.text);
  }
  handleCopyInResponse(connection: { sendCopyFromChunk(b: Buffer): void; endCopyFrom(): void }) {
    connection.sendCopyFromChunk(this.data);
    connection.endCopyFrom();
  }
  handleError(err: Error) {
    this.error = err;
  }
  handleReadyForQuery() {
    this.callback?.(this.error);
  }
  handleCommandComplete() {}
  handleRowDescription() {}
  handleDataRow() {}
  handlePortalSuspended() {}
  handleEmptyQuery() {}
  handleCopyData() {}
}

function copyOverPg(client: pg.Client, rows: StoredRow[]): Promise<void> {
  const copy = new CopyFromStdin(COPY_SQL('STDIN'), Buffer.from(toCsv(rows)));
  return new Promise((resolve, reject) => {
    copy.callback = (err) => (err ? reject(err) : resolve());
    client.query(copy as unknown as pg.QueryConfig);
  });
}

// --- timing ---

const ms = (t0: number) => performance.now() - t0;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

interface IngestRow {
  driver: string;
  batch: number;
  /** Events per second over the summed time of each. */
  handler: number;
  drizzle: number;
  copy: number;
  /** Medians of the per-round throughput ratios. */
  handlerOverDrizzle: number;
  handlerOverCopy: number;
  /** The rollup fold of the handler's events afterwards, in one run: events/s, and handler plus fold together. */
  fold: number;
  handlerWithFold: number;
}

async function ingestBench(driver: 'pglite' | 'postgres'): Promise<IngestRow[]> {
  const pgDb = driver === 'postgres' ? await createPostgresDatabase() : undefined;
  const config = testConfig({
    db: { dsn: pgDb?.url ?? 'pglite:memory' },
    dashboard_url: DASHBOARD,
  });
  const runtime = await startRuntime(config);
  const db: Db = runtime.database.db;
  const copyClient = pgDb ? new pg.Client({ connectionString: pgDb.url }) : undefined;
  await copyClient?.connect();
  const pglite = runtime.database.driver === 'pglite' ? runtime.database.client : undefined;
  const copy = async (rows: StoredRow[]) => {
    if (copyClient) return copyOverPg(copyClient, rows);
    await pglite?.query(COPY_SQL(`'/dev/blob'`), [], { blob: new Blob([toCsv(rows)]) });
  };
  const out: IngestRow[] = [];
  try {
    const device = await enroll(config);
    for (const batch of [1, 100, 1000]) {
      // Rounds of one request each way, alternated, so that the three see the same load on a shared machine;
      // the figures are events over summed time, the ratios the medians of the per-round ratios.
      const rounds = batch === 1 ? (QUICK ? 60 : 200) : batch === 100 ? (QUICK ? 15 : 40) : QUICK ? 8 : 24;
      const warmup = Math.max(3, Math.round(rounds / 10));
      await foldBacklog(db, Number.POSITIVE_INFINITY); // what earlier batch sizes left
      const totals = { handler: 0, drizzle: 0, copy: 0 };
      const ratios = { drizzle: [] as number[], copy: [] as number[] };
      for (let round = -warmup; round < rounds; round++) {
        const event = signedEvent(device.identity, '/v1/devices/events', { events: makeEvents(batch) });
        const drizzleRows = storedRows(makeEvents(batch), device.deviceId, device.serialNumber);
        const copyRows = storedRows(makeEvents(batch), device.deviceId, device.serialNumber);
        let t0 = performance.now();
        const res = await invoke(handlers.events, event);
        const handlerMs = ms(t0);
        if (res.accepted !== batch) throw new Error(`stored ${String(res.accepted)} of ${batch}`);
        t0 = performance.now();
        await db.insert(observabilityEvents).values(drizzleRows);
        const drizzleMs = ms(t0);
        t0 = performance.now();
        await copy(copyRows);
        const copyMs = ms(t0);
        if (round < 0) continue; // warm-up: JIT, plans, caches
        totals.handler += handlerMs;
        totals.drizzle += drizzleMs;
        totals.copy += copyMs;
        ratios.drizzle.push(drizzleMs / handlerMs);
        ratios.copy.push(copyMs / handlerMs);
      }
      // The rollups of the handler's events (warm-up included), folded at once as the schedule or a read does.
      const t0 = performance.now();
      const { folded } = await foldBacklog(db, Number.POSITIVE_INFINITY);
      const foldMs = ms(t0);
      if (folded !== (rounds + warmup) * batch) throw new Error(`folded ${folded} events`);
      const stored = rounds * batch;
      out.push({
        driver,
        batch,
        handler: (stored / totals.handler) * 1000,
        drizzle: (stored / totals.drizzle) * 1000,
        copy: (stored / totals.copy) * 1000,
        handlerOverDrizzle: median(ratios.drizzle),
        handlerOverCopy: median(ratios.copy),
        fold: (folded / foldMs) * 1000,
        handlerWithFold: (stored / (totals.handler + (foldMs * rounds) / (rounds + warmup))) * 1000,
      });
    }
  } finally {
    await copyClient?.end();
    setRuntime(undefined);
    await runtime.database.close();
    await pgDb?.drop();
  }
  return out;
}

// --- 2. signature verification ---

interface VerifyRow {
  keyType: string;
  body: string;
  bytes: number;
  bare: number;
  fast: number;
  canonical: number;
  /** Medians of the per-round ratios to bare. */
  fastRatio: number;
  canonicalRatio: number;
}

/** Milliseconds per call of `fn` over one block of `n` calls. */
function block(fn: () => unknown, n: number): number {
  const t0 = performance.now();
  for (let i = 0; i < n; i++) fn();
  return (performance.now() - t0) / n;
}
async function verifyBench(): Promise<VerifyRow[]> {
  const rows: VerifyRow[] = [];
  for (const keyType of ['p256', 'ed25519'] as const) {
    const identity = await createDeviceIdentity(keyType);
    const key = createPublicKey(identity.certificatePem);
    for (const [label, fields] of [
      ['small (inventory, 2 agents)', { agents: inventory.slice(0, 2) as AgentReport[] }],
      ['large (1000 events)', { events: makeEvents(1000) }],
    ] as const) {
      const body = {
        ...fields,
        certificate: identity.certificatePem,
        clientTimestamp: new Date().toISOString(),
      };
      const canonical = canonicalBytes(body);
      const text = canonical.toString('utf8');
      const signature = signBytes(identity, canonical);
      const sigBytes = decodeSignature(signature);
      const parsed = JSON.parse(text) as Record<string, unknown>;
      // The same body as a sender that does not send its canonical bytes: other key order, whitespace.
      const other = JSON.stringify(body, null, 1);
      const parsedOther = JSON.parse(other) as Record<string, unknown>;
      const bare = () =>
        keyType === 'ed25519'
          ? verify(null, canonical, key, sigBytes)
          : verify('sha256', canonical, { key, dsaEncoding: 'der' }, sigBytes);
      const subject = (raw: string, parsedBody: Record<string, unknown>) => () =>
        verifySignedDeviceRequest({
          body: parsedBody,
          rawBody: raw,
          signature,
          signatureInBody: false,
          now: new Date(),
          maxSkewMs: 300_000,
        });
      const fast = subject(text, parsed);
      const slow = subject(other, parsedOther);
      if (!bare()) throw new Error('bare verify failed');
      if (fast().via !== 'raw') throw new Error('fast path not taken');
      if (slow().via !== 'canonical') throw new Error('fallback not taken');
      parseDeviceCertificate(identity.certificatePem, new Date()); // the cache is warm in a running Lambda
      // Short blocks of each, alternated, many times: the machine's load drifts less within one round than over
      // the run, so the per-round ratios (and their median) compare like with like.
      const n = Math.max(2, Math.round(3 / Math.max(block(bare, 5), 0.001)));
      const times = { bare: [] as number[], fast: [] as number[], canonical: [] as number[] };
      const ratios = { fast: [] as number[], canonical: [] as number[] };
      for (let round = 0; round < (QUICK ? 15 : 40); round++) {
        const b = block(bare, n);
        const f = block(fast, n);
        const c = block(slow, Math.max(1, Math.round(n / 10)));
        times.bare.push(b);
        times.fast.push(f);
        times.canonical.push(c);
        ratios.fast.push(f / b);
        ratios.canonical.push(c / b);
      }
      rows.push({
        keyType,
        body: label,
        bytes: canonical.length,
        bare: median(times.bare),
        fast: median(times.fast),
        canonical: median(times.canonical),
        fastRatio: median(ratios.fast),
        canonicalRatio: median(ratios.canonical),
      });
    }
  }
  return rows;
}

// --- 3. Data API calls per request ---

async function dataApiCalls() {
  process.env.AWS_ACCESS_KEY_ID ??= 'AKIDTESTDATAAPI';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'test-data-api-secret-key';
  const { startDataApiServer } = await import('#test/support/data-api-server.ts');
  const database = await createPostgresDatabase();
  const server = await startDataApiServer({ connectionString: database.url });
  const dsn = `data-api://${server.database}?resourceArn=${encodeURIComponent(server.resourceArn)}&secretArn=${encodeURIComponent(server.secretArn)}&region=us-east-1&endpoint=${encodeURIComponent(server.url)}`;
  const config = testConfig({ db: { dsn }, dashboard_url: DASHBOARD });
  const runtime = await startRuntime(config);
  const counted = async (fn: () => Promise<unknown>) => {
    server.resetCalls();
    await fn();
    return Object.values(server.calls).reduce((a, b) => a + b, 0);
  };
  try {
    const token = await enrollmentToken(config);
    const identity = await createDeviceIdentity('p256');
    const hardware = { serialNumber: 'DAPI-1', brand: 'Lenovo', model: 'X1', ownerEmail: '' };
    const register = () =>
      invoke(handlers.register, signedEvent(identity, '/v1/devices/register', hardware, token));
    const first = await counted(register);
    const again = await counted(register);
    const rotated = await createDeviceIdentity('ed25519');
    const rotation = await counted(() =>
      invoke(handlers.register, signedEvent(rotated, '/v1/devices/register', hardware, token)),
    );
    const inv = await counted(() =>
      invoke(handlers.inventory, signedEvent(rotated, '/v1/devices/inventory', { agents: inventory })),
    );
    const ev = await counted(() =>
      invoke(handlers.events, signedEvent(rotated, '/v1/devices/events', { events: makeEvents(1000) })),
    );
    return [
      ['register (new device)', first, 3],
      ['register (same certificate)', again, 3],
      ['register (certificate rotation)', rotation, 3],
      ['inventory', inv, 3],
      ['events (1000)', ev, 2],
    ] as const;
  } finally {
    setRuntime(undefined);
    await runtime.database.close();
    await server.close();
    await database.drop();
  }
}

// --- run ---

let postgresUp = true;
try {
  const c = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await c.connect();
  await c.end();
} catch (err) {
  postgresUp = false;
  console.log(`PostgreSQL at ${process.env.TEST_DATABASE_URL} is not reachable (${(err as Error).message}).`);
}

if (PARTS.has('ingest')) {
  const ingest = [...(await ingestBench('pglite')), ...(postgresUp ? await ingestBench('postgres') : [])];
  console.log(
    '\nbench:ingest — events/s stored through the events handler (direct invocation with an API Gateway v2 event)',
  );
  console.log(
    "vs (a) drizzle multi-row .values() and (b) COPY FROM STDIN (PGlite: FROM /dev/blob), same rows, same run;\nev/s over summed time, ratios = medians of per-round ratios (one request each way per round, alternated);\nfold: the rollups of all the handler's events of that batch size, folded afterwards in one call (observability_fold())",
  );
  console.log(
    '| database | batch | handler ev/s | (a) drizzle ev/s | handler / (a) | (b) COPY ev/s | handler / (b) | fold ev/s | handler + fold ev/s |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const x of ingest) {
    console.log(
      `| ${x.driver} | ${x.batch} | ${fmt(x.handler)} | ${fmt(x.drizzle)} | ${fmt(x.handlerOverDrizzle, 2)} | ${fmt(x.copy)} | ${fmt(x.handlerOverCopy, 2)} | ${fmt(x.fold)} | ${fmt(x.handlerWithFold)} |`,
    );
  }
  const pg1000 = ingest.find((x) => x.driver === 'postgres' && x.batch === 1000);
  if (pg1000) {
    goal(
      'PostgreSQL, batch 1000: handler ≥ 2× drizzle .values()',
      `${fmt(pg1000.handlerOverDrizzle, 2)}×`,
      pg1000.handlerOverDrizzle >= 2,
    );
    goal(
      'PostgreSQL, batch 1000: handler within 1.5× of COPY',
      `COPY / handler = ${fmt(1 / pg1000.handlerOverCopy, 2)}×`,
      1 / pg1000.handlerOverCopy <= 1.5,
    );
  } else {
    goal('PostgreSQL ingest goals', 'not measured: no PostgreSQL', false);
  }
}

if (PARTS.has('verify')) {
  const verifyRows = await verifyBench();
  console.log(
    '\nSignature verification per request (verifySignedDeviceRequest, certificate cache warm) vs bare crypto.verify with a cached key\n(alternating short blocks; ratios are medians of the per-round ratios)',
  );
  console.log(
    '| key | body | bytes | bare µs | fast path µs | fast / bare | canonicalizing µs (body not sent canonical) | canonicalizing / bare |',
  );
  console.log('|---|---|---:|---:|---:|---:|---:|---:|');
  for (const v of verifyRows) {
    console.log(
      `| ${v.keyType} | ${v.body} | ${fmt(v.bytes)} | ${fmt(v.bare * 1000, 1)} | ${fmt(v.fast * 1000, 1)} | ${fmt(v.fastRatio, 2)} | ${fmt(v.canonical * 1000, 1)} | ${fmt(v.canonicalRatio, 2)} |`,
    );
    goal(`verification ≤ 1.3× bare, ${v.keyType}, ${v.body}`, `${fmt(v.fastRatio, 2)}×`, v.fastRatio <= 1.3);
  }
}

if (PARTS.has('calls') && postgresUp) {
  const calls = await dataApiCalls();
  console.log('\nData API calls per request (test/support/data-api-server.ts, every HTTP round trip)');
  console.log('| request | calls | goal |');
  console.log('|---|---:|---:|');
  for (const [name, n, max] of calls) {
    console.log(`| ${name} | ${n} | ≤ ${max} |`);
    goal(`Data API calls, ${name} ≤ ${max}`, String(n), n <= max);
  }
} else if (PARTS.has('calls')) {
  goal('Data API call counts', 'not measured: no PostgreSQL', false);
}

if (PARTS.has('export') && postgresUp) {
  const { database, url, drop } = await openBenchDatabase();
  try {
    await migrate(database.db);
    await insertBenchDevice(database.db);
    const rounds = Number(process.env.BENCH_EXPORT_ROUNDS ?? (QUICK ? 2 : 4));
    const seconds = Number(process.env.BENCH_EXPORT_INGEST_SECONDS ?? 5);
    const r = await ingestBesideExport({ db: database.db, url, rounds, seconds });
    const ratio = r.beside / r.alone;
    console.log(
      `\nIngest (ingestEvents, batches of 100) on PostgreSQL alone and with an OTLP export beside it (${rounds} rounds of ${seconds} s each way, alternated)`,
    );
    console.log('| alone ev/s | with an export ev/s | with ÷ alone | exported meanwhile |');
    console.log('|---:|---:|---:|---:|');
    console.log(`| ${fmt(r.alone)} | ${fmt(r.beside)} | ${fmt(ratio, 2)} | ${fmt(r.exported)} |`);
    goal('ingest with an export running ≥ 0.90× alone', `${fmt(ratio, 2)}×`, ratio >= 0.9);
  } finally {
    await drop();
  }
} else if (PARTS.has('export')) {
  goal('ingest with an export running', 'not measured: no PostgreSQL', false);
}

console.log('\n| goal | measured | result |');
console.log('|---|---|---|');
for (const g of goals) console.log(`| ${g.goal} | ${g.measured} | ${g.pass ? 'PASS' : 'FAIL'} |`);
process.exitCode = goals.every((g) => g.pass) ? 0 : 1;
