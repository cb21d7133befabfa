// The database and the events of the benchmarks that seed whole days (bench:partitions, bench:archive): one device,
// and `count` events
// spread evenly over a UTC day in the shape of bench:observability's: a few agents, MCPs and tools, some denied and
// errored, a prompt on one in four, metadata on each. Inserted by one statement (no ingest_xid: the fold skips
// them).
import { sql } from 'drizzle-orm';
import { connectDatabase } from '#shared/core/db/connect.ts';
import type { Database, Db } from '#shared/core/db/database.ts';
import { setLogLevel } from '#shared/core/logger.ts';
import { createPostgresDatabase, useBenchDatabase } from '#test/support/databases.ts';

/**
 * A fresh database on TEST_DATABASE_URL's server (else a PostgreSQL from npm started for the run), not migrated,
 * with no statement timeout to speak of; `drop` closes it and removes it.
 */
export async function openBenchDatabase(): Promise<{
  database: Database;
  url: string;
  drop: () => Promise<void>;
}> {
  await useBenchDatabase();
  setLogLevel('error');
  const pgDatabase = await createPostgresDatabase();
  const database = await connectBenchDatabase(pgDatabase.url);
  return {
    database,
    url: pgDatabase.url,
    drop: async () => {
      await database.close();
      await pgDatabase.drop();
    },
  };
}

/** A pool of two connections to the bench database at `url` (another process or thread opens its own). */
export function connectBenchDatabase(url: string): Promise<Database> {
  return connectDatabase({
    db: {
      dsn: url,
      max_open_conns: 2,
      max_idle_conns: 0,
      max_idle_time: 1000,
      statement_timeout: 3_600_000,
      resume_wait: 20_000,
    },
  });
}

export const BENCH_DEVICE = '00000000-0000-4000-8000-00000000b001';

export async function insertBenchDevice(db: Db): Promise<void> {
  await db.execute(sql`INSERT INTO devices (id, serial_number, brand, model, owner_subject, certificate_fingerprint,
      certificate_pem, key_type, cert_not_before, cert_not_after)
    VALUES (${BENCH_DEVICE}::uuid, 'BENCH-1', 'b', 'm', 'o', 'fp-bench', 'pem', 'p256', now(), now())`);
}

/** Creates the day's partition and inserts `count` events over it (YYYY-MM-DD, UTC). */
export async function seedBenchDay(db: Db, day: string, count: number): Promise<void> {
  await db.execute(sql`SELECT observability_events_add_partition(${day}::date)`);
  await db.execute(sql`INSERT INTO observability_events (event_id, device_id, serial_number, source_ip, event_time,
      agent_type, mcp_name, tool, event_type, result, deny_code, deny_reason, model, session_id, actor_email,
      tokens_in, tokens_out, duration_ms, skills, prompt, metadata)
    SELECT gen_random_uuid(), ${BENCH_DEVICE}::uuid, 'BENCH-1', '10.0.0.1',
      ${day}::date::timestamp AT TIME ZONE 'UTC' + (g::double precision * 86400 / ${count}) * interval '1 second',
      (ARRAY['claude-code', 'cursor', 'codex'])[1 + g % 3], (ARRAY['github', 'filesystem', 'postgres', 'slack'])[1 + g % 4],
      'tool_' || (g % 17), CASE WHEN g % 10 = 9 THEN 'error' ELSE 'invocation' END,
      CASE WHEN g % 20 = 3 THEN 'denied' WHEN g % 10 = 9 THEN 'error' ELSE 'allowed' END,
      CASE WHEN g % 20 = 3 THEN 'path_outside_workspace' END, CASE WHEN g % 20 = 3 THEN 'outside the workspace' END,
      'claude-sonnet-4', 'session-' || (g / 50), 'user' || (g % 300) || '@example.com', g % 2000, g % 700, g % 900,
      '["review"]'::jsonb, CASE WHEN g % 4 = 0 THEN repeat('prompt text ', 20) END,
      jsonb_build_object('cwd', '/home/dev/project', 'n', g)
    FROM generate_series(0, ${count} - 1) AS g`);
}
