-- The events' transaction index gains the event id, (ingest_xid, id): the exports read the events after a cursor in
-- that order, and with ingest_xid alone every batch re-read and sorted all the rows of the cursor's transaction.
-- The rollup fold's ranges of ingest_xid use the wider index as they used the narrow one.
DROP INDEX "observability_events_ingest_xid_idx";--> statement-breakpoint
CREATE INDEX "observability_events_ingest_xid_idx" ON "observability_events" USING btree ("ingest_xid","id");
