// The bench:observability data set (2,000 devices, events over 30 days), for the benchmarks that need it:
// bench:observability (the API's figures) and bench:console -- --pages (the console's, in Chromium).
import { sql } from 'drizzle-orm';
import type { Db } from '#shared/core/db/database.ts';
import { col, queryRows } from '#shared/core/db/query.ts';

export const DEVICES = 2000;
const DAY = 86_400_000;
const seconds = (t0: number) => `${((performance.now() - t0) / 1000).toFixed(1)} s`;

/** The event table's secondary indexes, dropped for the bulk load and rebuilt from their own definitions after. */
async function withoutEventIndexes(db: Db, load: () => Promise<void>): Promise<number> {
  const defs = await queryRows(
    db,
    sql`SELECT indexname AS name, indexdef AS def FROM pg_indexes
      WHERE tablename = 'observability_events' AND indexname <> 'observability_events_pkey'`,
    { name: col.text, def: col.text },
  );
  for (const d of defs) await db.execute(sql.raw(`DROP INDEX ${d.name}`));
  await load();
  const t0 = performance.now();
  // The table is partitioned: pg_indexes gives the parent's definition ON ONLY it; without ONLY it builds every
  // partition's index too.
  for (const d of defs) await db.execute(sql.raw(d.def.replace(' ON ONLY ', ' ON ')));
  return performance.now() - t0;
}

const TOOLS = `(VALUES
  ('filesystem', 'read_file', 'path_outside_workspace', 'fs.workspace-only'),
  ('filesystem', 'write_file', 'path_outside_workspace', 'fs.workspace-only'),
  ('filesystem', 'list_directory', 'path_outside_workspace', 'fs.workspace-only'),
  ('filesystem', 'search_files', 'path_outside_workspace', 'fs.workspace-only'),
  ('github', 'create_issue', 'merge_requires_review', 'github.protected-branches'),
  ('github', 'get_pull_request', 'merge_requires_review', 'github.protected-branches'),
  ('github', 'search_code', 'secret_in_payload', 'dlp.secrets'),
  ('github', 'merge_pull_request', 'merge_requires_review', 'github.protected-branches'),
  ('postgres', 'query', 'destructive_sql', 'db.read-only'),
  ('postgres', 'list_tables', 'destructive_sql', 'db.read-only'),
  ('postgres', 'describe_table', 'destructive_sql', 'db.read-only'),
  ('slack', 'post_message', 'secret_in_payload', 'dlp.secrets'),
  ('slack', 'search_messages', 'secret_in_payload', 'dlp.secrets'),
  ('slack', 'list_channels', 'secret_in_payload', 'dlp.secrets'),
  ('browser', 'navigate', 'secret_in_payload', 'dlp.secrets'),
  ('browser', 'screenshot', 'secret_in_payload', 'dlp.secrets'),
  ('browser', 'click', 'secret_in_payload', 'dlp.secrets'),
  ('jira', 'create_ticket', 'secret_in_payload', 'dlp.secrets'),
  ('jira', 'search_issues', 'secret_in_payload', 'dlp.secrets')) AS v(mcp, tool, deny, rule)`;

/**
 * 2,000 devices with their inventory, and `events` tool-call events over the 30 days before `now`, in time order as
 * a live table fills (generate_series in SQL; the event table's secondary indexes dropped for the load and rebuilt
 * after). The rollups are not rebuilt here: call rebuildRollups after.
 */
export async function seedObservability(db: Db, events: number, now: Date): Promise<void> {
  await db.execute(
    sql`CREATE TABLE bench_devices (n int PRIMARY KEY, id uuid NOT NULL, serial text NOT NULL)`,
  );
  await db.execute(
    sql.raw(`INSERT INTO devices (serial_number, brand, model, owner_subject, owner_email,
      certificate_fingerprint, certificate_pem, key_type, cert_not_before, cert_not_after, last_seen_at,
      last_inventory_at, last_event_at, created_at, updated_at)
    SELECT 'BENCH-' || lpad(n::text, 5, '0'), 'Lenovo', 'ThinkPad X1', 'sub-' || n, 'user' || n || '@example.test',
      md5(n::text) || md5('x' || n), 'pem', 'p256', now() - interval '300 days', now() + interval '65 days',
      now() - (n % 200) * interval '3 minutes', now() - interval '1 day', now() - (n % 200) * interval '3 minutes',
      now() - (n % 60) * interval '1 day', now() - (n % 30) * interval '1 hour'
    FROM generate_series(0, ${DEVICES - 1}) AS n`),
  );
  await db.execute(sql`INSERT INTO bench_devices SELECT row_number() OVER (ORDER BY serial_number) - 1, id,
    serial_number FROM devices WHERE serial_number LIKE 'BENCH-%'`);
  await db.execute(
    sql.raw(`INSERT INTO inventory_agents (device_id, agent_type, display_name)
    SELECT b.id, a.t, a.t FROM bench_devices b CROSS JOIN (VALUES ('claude-code'), ('cursor'), ('copilot'), ('windsurf')) AS a(t)
    WHERE (b.n + length(a.t)) % 3 <> 0`),
  );
  await db.execute(
    sql.raw(`INSERT INTO inventory_mcps (device_id, agent_type, name, enabled, transport)
    SELECT a.device_id, a.agent_type, m.name, (hashtext(a.device_id::text || m.name) % 5) <> 0, m.tr
    FROM inventory_agents a CROSS JOIN (VALUES ('filesystem', 'stdio'), ('github', 'http'), ('postgres', 'stdio'),
      ('slack', 'sse'), ('jira', 'http'), ('notion', 'http')) AS m(name, tr)
    WHERE abs(hashtext(a.device_id::text || m.name)) % 3 = 0`),
  );
  // Events in time order (as a live table fills): event i at start + (i + jitter) * span / n, on device i % 2000.
  const start = now.getTime() - 30 * DAY;
  const step = (30 * DAY) / events;
  const chunk = 250_000;
  const t0 = performance.now();
  // The days' partitions first (the migration made today's week only), as the schedule would have over 30 days.
  await db.execute(
    sql`SELECT observability_events_maintain(${new Date(start).toISOString().slice(0, 10)}::date, 38, 0)`,
  );
  const indexMs = await withoutEventIndexes(db, async () => {
    for (let lo = 0; lo < events; lo += chunk) {
      const hi = Math.min(events, lo + chunk) - 1;
      await db.execute(
        sql.raw(`INSERT INTO observability_events (device_id, serial_number, source_ip, received_at, event_time,
        agent_type, mcp_name, tool, event_type, result, deny_code, deny_reason, error_message, rule_applied, model,
        session_id, group_name, actor_email, tokens_in, tokens_out, duration_ms, skills, prompt)
      SELECT d.id, d.serial, '10.0.0.1', s.t + interval '2 seconds', s.t, ag.t, c.mcp, c.tool,
        CASE WHEN s.r2 < 0.03 THEN 'error' WHEN s.r3 < 0.5 THEN 'invocation' ELSE 'result' END,
        CASE WHEN s.r2 < 0.03 THEN 'error' WHEN s.r2 < 0.10 THEN 'denied' ELSE 'allowed' END,
        CASE WHEN s.r2 >= 0.03 AND s.r2 < 0.10 THEN c.deny END,
        CASE WHEN s.r2 >= 0.03 AND s.r2 < 0.10 THEN 'denied by ' || c.rule || ' for ' || c.tool END,
        CASE WHEN s.r2 < 0.01 THEN 'ECONNRESET talking to the MCP server' WHEN s.r2 < 0.02
          THEN 'tool timed out after 30s' WHEN s.r2 < 0.03 THEN 'rate limited by upstream (429)' END,
        CASE WHEN s.r2 >= 0.03 AND s.r2 < 0.10 THEN c.rule END, ag.model,
        'sess-' || s.dn || '-' || (extract(epoch FROM s.t)::bigint / 3600),
        (ARRAY['platform', 'data', 'security', 'frontend'])[1 + s.dn % 4],
        'user' || s.dn || '@example.test', (s.r3 * 4000)::int, (s.r3 * 600)::int, (exp(s.r1 * 9))::int,
        CASE WHEN s.r4 < 0.1 THEN jsonb_build_array((ARRAY['code-review', 'sql', 'search', 'refactor', 'deploy'])[1 + (s.r4 * 50)::int % 5])
          ELSE '[]'::jsonb END,
        'Find where the billing retry logic lives'
      FROM (SELECT i, i % ${DEVICES} AS dn,
              to_timestamp((${start} + (i + random()) * ${step}) / 1000.0) AS t, random() AS r1, random() AS r2,
              random() AS r3, random() AS r4, (random() * 19)::int % 19 AS k, (i / ${DEVICES}) % 4 AS a
            FROM generate_series(${lo}, ${hi}) AS i) s
      JOIN bench_devices d ON d.n = s.dn
      JOIN (VALUES (0, 'claude-code', 'claude-sonnet-4-5'), (1, 'cursor', 'gpt-5'), (2, 'copilot', 'gpt-4.1'),
                   (3, 'windsurf', 'claude-opus-4')) AS ag(k, t, model) ON ag.k = s.a
      JOIN (SELECT row_number() OVER () - 1 AS k, * FROM ${TOOLS}) c ON c.k = s.k
      ORDER BY s.i`),
      );
      process.stdout.write(`  loaded ${(hi + 1).toLocaleString('en')} events\r`);
    }
    process.stdout.write('\n');
    console.log(`load: ${seconds(t0)}`);
  });
  console.log(`event indexes rebuilt: ${(indexMs / 1000).toFixed(1)} s`);
}
