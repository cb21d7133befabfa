-- The minute series in bucket order, for the summary's minute series (shared/db/schema-observability.ts): on the
-- primary key the planner read the rows by bitmap and sorted them (31 ms at 500k events); this walk takes 14 ms.
CREATE INDEX "observability_series_minute_idx" ON "observability_series" USING btree ("bucket") WHERE "observability_series"."grain" = 'minute';