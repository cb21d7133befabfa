// Ingest's rate with and without an export running beside it, in one run (bench:ingest and bench:export print it):
// ingestEvents in batches of 100, and an OTLP protobuf destination sending to a local receiver that drains what it
// gets. The export runs as in AWS, apart from ingest: in a thread of its own (its own event loop and connections, as
// the exports/deliver function is another Lambda than the events one), and paced as its schedule paces it: a pass
// starts once a period (PERIOD_MS, the schedule's exports.interval shortened) and drains what arrived since, rather
// than starting again as soon as the one before ends. The windows alternate alone / beside / beside / alone…, so
// that a load that drifts during the run weighs on both sides alike.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { sql } from 'drizzle-orm';
import type { Db } from '#shared/core/db/database.ts';
import { ingestEvents } from '#shared/devices/events.ts';
import { observabilityEvent } from '#shared/devices/schemas.ts';
import { createDestination, deliverExports } from '#shared/exports/streams.ts';
import { testConfig } from '#test/support/service.ts';
import { verifiedDevice } from '#test/support/verified-device.ts';
import { nextMessage } from './messages.ts';
import { startDrainReceiver } from './receiver.ts';
import { connectBenchDatabase } from './seed-events.ts';

/** The `exports` config of the exporter (the receiver needs no secret). */
const EXPORTS = { batch: 1000, timeout: '60s' };

/** The period the exporter's passes start at (a schedule's exports.interval, shortened for the bench). */
const PERIOD_MS = 1000;

interface ExporterData {
  url: string;
}

type ToExporter = 'run' | 'pause' | 'exit';
interface FromExporter {
  exported: number;
}

export interface BesideResult {
  /** Ingest's events/s without the export, and with it, over the windows of each. */
  alone: number;
  beside: number;
  /** Events the export delivered during the windows beside ingest. */
  exported: number;
}

/** Ingest for `ms` through ingestEvents, batches of 100, as the bench device (insertBenchDevice); events stored. */
async function ingestFor(db: Db, ms: number): Promise<number> {
  const config = testConfig();
  let n = 0;
  const until = Date.now() + ms;
  while (Date.now() < until) {
    const events = Array.from({ length: 100 }, (_, i) =>
      observabilityEvent.parse({
        event_id: randomUUID(),
        event_time: new Date(Date.now() - 1000).toISOString(),
        agent_type: 'cursor',
        mcp_name: 'github',
        tool: `tool_${i % 7}`,
        event_type: 'invocation',
        result: 'allowed',
        duration_ms: i,
      }),
    );
    await ingestEvents(db, config, verifiedDevice('fp-bench'), events, '127.0.0.1');
    n += events.length;
  }
  return n;
}

/**
 * Alternates `rounds` windows of `seconds` each of ingest alone and beside an export, on the migrated bench
 * database `db` at `url` holding the bench device: an OTLP destination from now on is the only one enabled.
 */
export async function ingestBesideExport(options: {
  db: Db;
  url: string;
  rounds: number;
  seconds: number;
}): Promise<BesideResult> {
  const { db } = options;
  const receiver = await startDrainReceiver();
  const endpoint = receiver.url;
  await db.execute(sql`UPDATE export_destinations SET enabled = false`);
  await createDestination(
    db,
    { name: 'beside-ingest', enabled: true, start: 'now', kind: 'otlp_http', settings: { endpoint } },
    { id: 'bench', email: 'bench@example.com', ipAddress: '127.0.0.1' },
  );
  const data: ExporterData = { url: options.url };
  const worker = new Worker(new URL(import.meta.url), { workerData: data });
  const reply = () => nextMessage<FromExporter>(worker);
  const ms = options.seconds * 1000;
  let alone = 0;
  let beside = 0;
  let exported = 0;
  const windowAlone = async () => {
    alone += await ingestFor(db, ms);
  };
  const windowBeside = async () => {
    worker.postMessage('run' satisfies ToExporter);
    beside += await ingestFor(db, ms);
    const done = reply();
    worker.postMessage('pause' satisfies ToExporter);
    exported += (await done).exported;
  };
  try {
    await reply(); // ready
    for (let round = 0; round < options.rounds; round++) {
      if (round % 2 === 0) {
        await windowAlone();
        await windowBeside();
      } else {
        await windowBeside();
        await windowAlone();
      }
    }
  } finally {
    worker.postMessage('exit' satisfies ToExporter);
    await new Promise((resolve) => worker.once('exit', resolve));
    await receiver.close();
  }
  const seconds = options.rounds * options.seconds;
  return { alone: alone / seconds, beside: beside / seconds, exported };
}

/** The exporter thread: delivery passes while running, as the schedule would start them. */
async function exporter(port: NonNullable<typeof parentPort>, data: ExporterData): Promise<void> {
  const database = await connectBenchDatabase(data.url);
  const { db } = database;
  const config = testConfig({ exports: { ...EXPORTS, time_budget: '1s' } });
  let running = false;
  let loop: Promise<void> = Promise.resolve();
  const run = async () => {
    let exported = 0;
    while (running) {
      const started = Date.now();
      const [pass] = await deliverExports(db, config);
      exported += pass?.delivered ?? 0;
      await db.execute(sql`UPDATE export_cursors SET next_attempt_at = now()`);
      const rest = PERIOD_MS - (Date.now() - started);
      if (rest > 0) await sleep(rest);
    }
    port.postMessage({ exported } satisfies FromExporter);
  };
  port.on('message', (message: ToExporter) => {
    if (message === 'run') {
      running = true;
      // From now on, as a destination created now: what ingest stored while the export was paused is not its work,
      // else each window beside would also carry the previous window's backlog, which steady state never has.
      loop = db
        .execute(
          sql`UPDATE export_cursors SET cursor_xid = pg_snapshot_xmin(pg_current_snapshot()), cursor_id = 0`,
        )
        .then(run);
    } else if (message === 'pause') running = false;
    else {
      running = false;
      void loop.then(() => database.close()).then(() => port.close());
    }
  });
  port.postMessage({ exported: 0 } satisfies FromExporter);
}

if (!isMainThread && parentPort) await exporter(parentPort, workerData as ExporterData);
