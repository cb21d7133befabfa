// Catalog entries: what datasources and targets exist. Anyone signed in reads them; admins create and update them,
// each change audited in its own transaction.
import { and, asc, count, desc, eq, type SQL, sql } from 'drizzle-orm';
import { type AuditActor, recordAudit } from '../audit/audit.ts';
import type { Db } from '../core/db/database.ts';
import { catalogEntries } from '../core/db/schema.ts';
import { notFound } from '../core/errors.ts';
import { isUuid } from '../requests/requests.ts';
import type { CatalogEntryView, CreateCatalogBody, ListCatalogQuery, UpdateCatalogBody } from './schemas.ts';

type CatalogRow = typeof catalogEntries.$inferSelect;

export const toCatalogView = (row: CatalogRow): CatalogEntryView => ({
  id: row.id,
  datasource_id: row.datasourceId,
  datasource_name: row.datasourceName,
  target_name: row.targetName,
  target_location: row.targetLocation,
  summary: row.summary,
  scan_policy: row.scanPolicy,
  metadata: row.metadata,
  schema: row.schema ?? null,
  created_at: row.createdAt.toISOString(),
  updated_at: row.updatedAt.toISOString(),
});

export async function listCatalog(db: Db, query: ListCatalogQuery) {
  const conditions: SQL[] = [];
  if (query.datasource_name) conditions.push(eq(catalogEntries.datasourceName, query.datasource_name));
  const where = conditions.length ? and(...conditions) : undefined;
  const order =
    query.sort === 'datasource_name'
      ? [asc(catalogEntries.datasourceName), asc(catalogEntries.targetName), asc(catalogEntries.id)]
      : query.sort === 'created_at'
        ? [asc(catalogEntries.createdAt), asc(catalogEntries.id)]
        : [desc(catalogEntries.createdAt), desc(catalogEntries.id)];
  const rows = await db
    .select()
    .from(catalogEntries)
    .where(where)
    .orderBy(...order)
    .limit(query.limit)
    .offset(query.offset);
  const [total] = await db.select({ n: count() }).from(catalogEntries).where(where);
  return {
    entries: rows.map(toCatalogView),
    total: Number(total?.n ?? 0),
    limit: query.limit,
    offset: query.offset,
  };
}

export async function getCatalogEntry(db: Db, id: string): Promise<CatalogEntryView> {
  if (!isUuid(id)) throw notFound('No catalog entry with this id.');
  const [row] = await db.select().from(catalogEntries).where(eq(catalogEntries.id, id)).limit(1);
  if (!row) throw notFound('No catalog entry with this id.');
  return toCatalogView(row);
}

export async function createCatalogEntry(
  db: Db,
  body: CreateCatalogBody,
  actor: AuditActor,
): Promise<CatalogEntryView> {
  return db.transaction(async (tx) => {
    const [row] = await tx
      .insert(catalogEntries)
      .values({
        datasourceId: body.datasource_id,
        datasourceName: body.datasource_name,
        targetName: body.target_name,
        targetLocation: body.target_location,
        summary: body.summary,
        scanPolicy: body.scan_policy,
        metadata: body.metadata,
        schema: body.schema ?? null,
      })
      .returning();
    const entry = row as CatalogRow;
    await recordAudit(tx, {
      actionType: 'catalog.created',
      actor,
      resourceType: 'catalog_entry',
      resourceId: entry.id,
      metadata: { datasource_name: entry.datasourceName, target_name: entry.targetName },
    });
    return toCatalogView(entry);
  });
}

/** PATCH: only the fields given change; the audit record names them. */
export async function updateCatalogEntry(
  db: Db,
  id: string,
  body: UpdateCatalogBody,
  actor: AuditActor,
): Promise<CatalogEntryView> {
  if (!isUuid(id)) throw notFound('No catalog entry with this id.');
  const set: Partial<typeof catalogEntries.$inferInsert> = {};
  if (body.metadata !== undefined) set.metadata = body.metadata;
  if (body.scan_policy !== undefined) set.scanPolicy = body.scan_policy;
  if ('schema' in body) set.schema = body.schema ?? null;
  if (body.summary !== undefined) set.summary = body.summary;
  if (body.target_location !== undefined) set.targetLocation = body.target_location;
  if (body.target_name !== undefined) set.targetName = body.target_name;
  // Nothing to change (an empty patch): the entry as it is, not touched, not audited.
  if (Object.keys(body).length === 0) return getCatalogEntry(db, id);
  return db.transaction(async (tx) => {
    const [row] = await tx
      .update(catalogEntries)
      .set({ ...set, updatedAt: sql`now()` })
      .where(eq(catalogEntries.id, id))
      .returning();
    if (!row) throw notFound('No catalog entry with this id.');
    await recordAudit(tx, {
      actionType: 'catalog.updated',
      actor,
      resourceType: 'catalog_entry',
      resourceId: id,
      metadata: { fields: Object.keys(body).sort() },
    });
    return toCatalogView(row);
  });
}
