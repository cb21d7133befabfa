// Ingestion of audit records shipped by the log shipper (source logshipper) and the chain check endpoint. Records of
// a batch are inserted by one statement in batch order, so the chain trigger links them in that order, all or none.
import { sql } from 'drizzle-orm';
import type { Db } from '../core/db/database.ts';
import { col, queryRows } from '../core/db/query.ts';
import { jsonParam } from '../core/db/sql-values.ts';
import type { IngestAuditBody } from '../requests/schemas.ts';
import { type AuditActor, auditValues } from './audit.ts';

export async function ingestLogshipperRecords(
  db: Db,
  body: IngestAuditBody,
  shipper: AuditActor,
): Promise<{ accepted: number; ids: string[] }> {
  const values = body.records.map((r) =>
    auditValues({
      actionType: r.action_type,
      actor: { id: r.actor_id, email: r.actor_email, ipAddress: r.ip_address },
      resourceType: r.resource_type,
      resourceId: r.resource_id,
      source: 'logshipper',
      level: r.level,
      appName: r.app_name,
      containerId: r.container_id,
      environmentId: r.environment_id,
      environmentName: r.environment_name,
      stage: r.stage,
      timestamp: new Date(r.timestamp),
      // Who shipped it is part of the record (and of its hash): a forged batch names the token that sent it.
      metadata: { ...r.metadata, ingested_by: shipper.email },
    }),
  );
  const rows = values.map((v) => ({
    id: v.id,
    action_type: v.actionType,
    actor_email: v.actorEmail,
    actor_id: v.actorId,
    app_name: v.appName,
    container_id: v.containerId,
    environment_id: v.environmentId,
    environment_name: v.environmentName,
    ip_address: v.ipAddress,
    level: v.level,
    resource_id: v.resourceId,
    resource_type: v.resourceType,
    stage: v.stage,
    source: v.source,
    timestamp: v.timestamp.toISOString(),
    created_at: v.createdAt.toISOString(),
    metadata: v.metadata,
    hash: v.hash,
  }));
  const inserted = await queryRows(
    db,
    sql`INSERT INTO audit_logs (id, action_type, actor_email, actor_id, app_name, container_id, environment_id,
        environment_name, ip_address, level, resource_id, resource_type, stage, source, timestamp, created_at,
        metadata, hash)
      SELECT (e->>'id')::uuid, e->>'action_type', e->>'actor_email', e->>'actor_id', e->>'app_name',
        e->>'container_id', e->>'environment_id', e->>'environment_name', e->>'ip_address', e->>'level',
        e->>'resource_id', e->>'resource_type', e->>'stage', e->>'source', (e->>'timestamp')::timestamptz,
        (e->>'created_at')::timestamptz, e->'metadata', e->>'hash'
      FROM jsonb_array_elements(${jsonParam(rows)}) WITH ORDINALITY AS r(e, n)
      ORDER BY r.n
      RETURNING id::text AS id`,
    { id: col.text },
  );
  return { accepted: inserted.length, ids: values.map((v) => v.id) };
}
