-- The duration histogram of observability_series (shared/domain/observability-rollups.ts, seriesSelectSql): the
-- longest duration and the same 64-bucket log histogram as the call rollups (h1..h64, empty buckets NULL) per
-- minute, hour and day, keyed by event type and result, so that every point of the summary's series carries its
-- p50 / p95 / p99 (histPercentile) wherever the series is read from. The fold fills them from now on (the next
-- migration redefines observability_fold).
ALTER TABLE "observability_series"
  ADD COLUMN "duration_max" integer DEFAULT 0 NOT NULL,
  ADD COLUMN "h1" integer,
  ADD COLUMN "h2" integer,
  ADD COLUMN "h3" integer,
  ADD COLUMN "h4" integer,
  ADD COLUMN "h5" integer,
  ADD COLUMN "h6" integer,
  ADD COLUMN "h7" integer,
  ADD COLUMN "h8" integer,
  ADD COLUMN "h9" integer,
  ADD COLUMN "h10" integer,
  ADD COLUMN "h11" integer,
  ADD COLUMN "h12" integer,
  ADD COLUMN "h13" integer,
  ADD COLUMN "h14" integer,
  ADD COLUMN "h15" integer,
  ADD COLUMN "h16" integer,
  ADD COLUMN "h17" integer,
  ADD COLUMN "h18" integer,
  ADD COLUMN "h19" integer,
  ADD COLUMN "h20" integer,
  ADD COLUMN "h21" integer,
  ADD COLUMN "h22" integer,
  ADD COLUMN "h23" integer,
  ADD COLUMN "h24" integer,
  ADD COLUMN "h25" integer,
  ADD COLUMN "h26" integer,
  ADD COLUMN "h27" integer,
  ADD COLUMN "h28" integer,
  ADD COLUMN "h29" integer,
  ADD COLUMN "h30" integer,
  ADD COLUMN "h31" integer,
  ADD COLUMN "h32" integer,
  ADD COLUMN "h33" integer,
  ADD COLUMN "h34" integer,
  ADD COLUMN "h35" integer,
  ADD COLUMN "h36" integer,
  ADD COLUMN "h37" integer,
  ADD COLUMN "h38" integer,
  ADD COLUMN "h39" integer,
  ADD COLUMN "h40" integer,
  ADD COLUMN "h41" integer,
  ADD COLUMN "h42" integer,
  ADD COLUMN "h43" integer,
  ADD COLUMN "h44" integer,
  ADD COLUMN "h45" integer,
  ADD COLUMN "h46" integer,
  ADD COLUMN "h47" integer,
  ADD COLUMN "h48" integer,
  ADD COLUMN "h49" integer,
  ADD COLUMN "h50" integer,
  ADD COLUMN "h51" integer,
  ADD COLUMN "h52" integer,
  ADD COLUMN "h53" integer,
  ADD COLUMN "h54" integer,
  ADD COLUMN "h55" integer,
  ADD COLUMN "h56" integer,
  ADD COLUMN "h57" integer,
  ADD COLUMN "h58" integer,
  ADD COLUMN "h59" integer,
  ADD COLUMN "h60" integer,
  ADD COLUMN "h61" integer,
  ADD COLUMN "h62" integer,
  ADD COLUMN "h63" integer,
  ADD COLUMN "h64" integer;
--> statement-breakpoint
-- Backfill, holding the fold's watermark row so that no fold runs meanwhile: the rows stored so far count the events
-- folded so far, and these statements read exactly those.
SELECT 1 FROM observability_fold_state FOR UPDATE;
--> statement-breakpoint
-- Hour and day rows from the call rollups of the same grain and bucket: they count the same events (the fold upserts
-- both at once, retention deletes both at the same age), and the call key holds event type and result, so the sums
-- are exact.
UPDATE observability_series s SET
  duration_max = x.duration_max, h1 = x.h1, h2 = x.h2, h3 = x.h3, h4 = x.h4, h5 = x.h5, h6 = x.h6, h7 = x.h7,
  h8 = x.h8, h9 = x.h9, h10 = x.h10, h11 = x.h11, h12 = x.h12, h13 = x.h13, h14 = x.h14, h15 = x.h15, h16 = x.h16,
  h17 = x.h17, h18 = x.h18, h19 = x.h19, h20 = x.h20, h21 = x.h21, h22 = x.h22, h23 = x.h23, h24 = x.h24,
  h25 = x.h25, h26 = x.h26, h27 = x.h27, h28 = x.h28, h29 = x.h29, h30 = x.h30, h31 = x.h31, h32 = x.h32,
  h33 = x.h33, h34 = x.h34, h35 = x.h35, h36 = x.h36, h37 = x.h37, h38 = x.h38, h39 = x.h39, h40 = x.h40,
  h41 = x.h41, h42 = x.h42, h43 = x.h43, h44 = x.h44, h45 = x.h45, h46 = x.h46, h47 = x.h47, h48 = x.h48,
  h49 = x.h49, h50 = x.h50, h51 = x.h51, h52 = x.h52, h53 = x.h53, h54 = x.h54, h55 = x.h55, h56 = x.h56,
  h57 = x.h57, h58 = x.h58, h59 = x.h59, h60 = x.h60, h61 = x.h61, h62 = x.h62, h63 = x.h63, h64 = x.h64
FROM (SELECT grain, bucket, event_type, result,
    max(duration_max) AS duration_max, sum(h1)::int AS h1, sum(h2)::int AS h2, sum(h3)::int AS h3,
    sum(h4)::int AS h4, sum(h5)::int AS h5, sum(h6)::int AS h6, sum(h7)::int AS h7, sum(h8)::int AS h8,
    sum(h9)::int AS h9, sum(h10)::int AS h10, sum(h11)::int AS h11, sum(h12)::int AS h12, sum(h13)::int AS h13,
    sum(h14)::int AS h14, sum(h15)::int AS h15, sum(h16)::int AS h16, sum(h17)::int AS h17, sum(h18)::int AS h18,
    sum(h19)::int AS h19, sum(h20)::int AS h20, sum(h21)::int AS h21, sum(h22)::int AS h22, sum(h23)::int AS h23,
    sum(h24)::int AS h24, sum(h25)::int AS h25, sum(h26)::int AS h26, sum(h27)::int AS h27, sum(h28)::int AS h28,
    sum(h29)::int AS h29, sum(h30)::int AS h30, sum(h31)::int AS h31, sum(h32)::int AS h32, sum(h33)::int AS h33,
    sum(h34)::int AS h34, sum(h35)::int AS h35, sum(h36)::int AS h36, sum(h37)::int AS h37, sum(h38)::int AS h38,
    sum(h39)::int AS h39, sum(h40)::int AS h40, sum(h41)::int AS h41, sum(h42)::int AS h42, sum(h43)::int AS h43,
    sum(h44)::int AS h44, sum(h45)::int AS h45, sum(h46)::int AS h46, sum(h47)::int AS h47, sum(h48)::int AS h48,
    sum(h49)::int AS h49, sum(h50)::int AS h50, sum(h51)::int AS h51, sum(h52)::int AS h52, sum(h53)::int AS h53,
    sum(h54)::int AS h54, sum(h55)::int AS h55, sum(h56)::int AS h56, sum(h57)::int AS h57, sum(h58)::int AS h58,
    sum(h59)::int AS h59, sum(h60)::int AS h60, sum(h61)::int AS h61, sum(h62)::int AS h62, sum(h63)::int AS h63,
    sum(h64)::int AS h64
  FROM observability_rollups WHERE kind = 'call' AND grain IN ('hour', 'day')
  GROUP BY grain, bucket, event_type, result) x
WHERE s.grain = x.grain AND s.bucket = x.bucket AND s.event_type = x.event_type AND s.result = x.result;
--> statement-breakpoint
-- Minute rows (no rollup has minutes) from the events the fold has counted: stored without a transaction stamp (a
-- bulk load that rebuildRollups counted), or below the watermark and not among the transactions it still waits for.
-- Minute rows older than events.retention (their partitions dropped) keep duration_max 0 and no histogram: their
-- points' percentiles are null although they have calls.
UPDATE observability_series s SET
  duration_max = x.duration_max, h1 = x.h1, h2 = x.h2, h3 = x.h3, h4 = x.h4, h5 = x.h5, h6 = x.h6, h7 = x.h7,
  h8 = x.h8, h9 = x.h9, h10 = x.h10, h11 = x.h11, h12 = x.h12, h13 = x.h13, h14 = x.h14, h15 = x.h15, h16 = x.h16,
  h17 = x.h17, h18 = x.h18, h19 = x.h19, h20 = x.h20, h21 = x.h21, h22 = x.h22, h23 = x.h23, h24 = x.h24,
  h25 = x.h25, h26 = x.h26, h27 = x.h27, h28 = x.h28, h29 = x.h29, h30 = x.h30, h31 = x.h31, h32 = x.h32,
  h33 = x.h33, h34 = x.h34, h35 = x.h35, h36 = x.h36, h37 = x.h37, h38 = x.h38, h39 = x.h39, h40 = x.h40,
  h41 = x.h41, h42 = x.h42, h43 = x.h43, h44 = x.h44, h45 = x.h45, h46 = x.h46, h47 = x.h47, h48 = x.h48,
  h49 = x.h49, h50 = x.h50, h51 = x.h51, h52 = x.h52, h53 = x.h53, h54 = x.h54, h55 = x.h55, h56 = x.h56,
  h57 = x.h57, h58 = x.h58, h59 = x.h59, h60 = x.h60, h61 = x.h61, h62 = x.h62, h63 = x.h63, h64 = x.h64
FROM (SELECT date_trunc('minute', e.event_time AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS bucket, e.event_type,
    e.result,
    max(duration_ms) AS duration_max, nullif(count(*) FILTER (WHERE b = 1), 0)::int AS h1,
    nullif(count(*) FILTER (WHERE b = 2), 0)::int AS h2, nullif(count(*) FILTER (WHERE b = 3), 0)::int AS h3,
    nullif(count(*) FILTER (WHERE b = 4), 0)::int AS h4, nullif(count(*) FILTER (WHERE b = 5), 0)::int AS h5,
    nullif(count(*) FILTER (WHERE b = 6), 0)::int AS h6, nullif(count(*) FILTER (WHERE b = 7), 0)::int AS h7,
    nullif(count(*) FILTER (WHERE b = 8), 0)::int AS h8, nullif(count(*) FILTER (WHERE b = 9), 0)::int AS h9,
    nullif(count(*) FILTER (WHERE b = 10), 0)::int AS h10, nullif(count(*) FILTER (WHERE b = 11), 0)::int AS h11,
    nullif(count(*) FILTER (WHERE b = 12), 0)::int AS h12, nullif(count(*) FILTER (WHERE b = 13), 0)::int AS h13,
    nullif(count(*) FILTER (WHERE b = 14), 0)::int AS h14, nullif(count(*) FILTER (WHERE b = 15), 0)::int AS h15,
    nullif(count(*) FILTER (WHERE b = 16), 0)::int AS h16, nullif(count(*) FILTER (WHERE b = 17), 0)::int AS h17,
    nullif(count(*) FILTER (WHERE b = 18), 0)::int AS h18, nullif(count(*) FILTER (WHERE b = 19), 0)::int AS h19,
    nullif(count(*) FILTER (WHERE b = 20), 0)::int AS h20, nullif(count(*) FILTER (WHERE b = 21), 0)::int AS h21,
    nullif(count(*) FILTER (WHERE b = 22), 0)::int AS h22, nullif(count(*) FILTER (WHERE b = 23), 0)::int AS h23,
    nullif(count(*) FILTER (WHERE b = 24), 0)::int AS h24, nullif(count(*) FILTER (WHERE b = 25), 0)::int AS h25,
    nullif(count(*) FILTER (WHERE b = 26), 0)::int AS h26, nullif(count(*) FILTER (WHERE b = 27), 0)::int AS h27,
    nullif(count(*) FILTER (WHERE b = 28), 0)::int AS h28, nullif(count(*) FILTER (WHERE b = 29), 0)::int AS h29,
    nullif(count(*) FILTER (WHERE b = 30), 0)::int AS h30, nullif(count(*) FILTER (WHERE b = 31), 0)::int AS h31,
    nullif(count(*) FILTER (WHERE b = 32), 0)::int AS h32, nullif(count(*) FILTER (WHERE b = 33), 0)::int AS h33,
    nullif(count(*) FILTER (WHERE b = 34), 0)::int AS h34, nullif(count(*) FILTER (WHERE b = 35), 0)::int AS h35,
    nullif(count(*) FILTER (WHERE b = 36), 0)::int AS h36, nullif(count(*) FILTER (WHERE b = 37), 0)::int AS h37,
    nullif(count(*) FILTER (WHERE b = 38), 0)::int AS h38, nullif(count(*) FILTER (WHERE b = 39), 0)::int AS h39,
    nullif(count(*) FILTER (WHERE b = 40), 0)::int AS h40, nullif(count(*) FILTER (WHERE b = 41), 0)::int AS h41,
    nullif(count(*) FILTER (WHERE b = 42), 0)::int AS h42, nullif(count(*) FILTER (WHERE b = 43), 0)::int AS h43,
    nullif(count(*) FILTER (WHERE b = 44), 0)::int AS h44, nullif(count(*) FILTER (WHERE b = 45), 0)::int AS h45,
    nullif(count(*) FILTER (WHERE b = 46), 0)::int AS h46, nullif(count(*) FILTER (WHERE b = 47), 0)::int AS h47,
    nullif(count(*) FILTER (WHERE b = 48), 0)::int AS h48, nullif(count(*) FILTER (WHERE b = 49), 0)::int AS h49,
    nullif(count(*) FILTER (WHERE b = 50), 0)::int AS h50, nullif(count(*) FILTER (WHERE b = 51), 0)::int AS h51,
    nullif(count(*) FILTER (WHERE b = 52), 0)::int AS h52, nullif(count(*) FILTER (WHERE b = 53), 0)::int AS h53,
    nullif(count(*) FILTER (WHERE b = 54), 0)::int AS h54, nullif(count(*) FILTER (WHERE b = 55), 0)::int AS h55,
    nullif(count(*) FILTER (WHERE b = 56), 0)::int AS h56, nullif(count(*) FILTER (WHERE b = 57), 0)::int AS h57,
    nullif(count(*) FILTER (WHERE b = 58), 0)::int AS h58, nullif(count(*) FILTER (WHERE b = 59), 0)::int AS h59,
    nullif(count(*) FILTER (WHERE b = 60), 0)::int AS h60, nullif(count(*) FILTER (WHERE b = 61), 0)::int AS h61,
    nullif(count(*) FILTER (WHERE b = 62), 0)::int AS h62, nullif(count(*) FILTER (WHERE b = 63), 0)::int AS h63,
    nullif(count(*) FILTER (WHERE b = 64), 0)::int AS h64
  FROM (SELECT e.event_time, e.event_type, e.result, e.duration_ms, obs_duration_bucket(e.duration_ms) AS b
    FROM observability_events e, observability_fold_state f
    WHERE e.ingest_xid IS NULL OR (e.ingest_xid < f.next_xid AND e.ingest_xid <> ALL (f.pending_xids))) e
  GROUP BY 1, 2, 3) x
WHERE s.grain = 'minute' AND s.bucket = x.bucket AND s.event_type = x.event_type AND s.result = x.result;
