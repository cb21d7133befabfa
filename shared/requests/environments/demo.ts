// The demo datasource a local start seeds (schema `demo`: customers, products, orders, deterministic data) and its
// catalog entries, so that a newcomer can walk request → approve → query in minutes. Idempotent.
import { and, eq, sql } from 'drizzle-orm';
import { createCatalogEntry } from '../../catalog/catalog.ts';
import type { Db } from '../../core/db/database.ts';
import { catalogEntries } from '../../core/db/schema.ts';

const TABLES = [
  `CREATE TABLE IF NOT EXISTS demo.customers (id integer PRIMARY KEY, name text NOT NULL, email text NOT NULL,
     country text NOT NULL, segment text NOT NULL, created_at timestamptz NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS demo.products (id integer PRIMARY KEY, name text NOT NULL, category text NOT NULL,
     price numeric(10,2) NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS demo.orders (id integer PRIMARY KEY, customer_id integer NOT NULL REFERENCES demo.customers,
     product_id integer NOT NULL REFERENCES demo.products, quantity integer NOT NULL, total numeric(12,2) NOT NULL,
     status text NOT NULL, region text NOT NULL, ordered_at timestamptz NOT NULL)`,
];

const DATA = [
  `INSERT INTO demo.customers
     SELECT i, (ARRAY['Ana','Bruno','Chloé','Dmitri','Eva','Femi','Grace','Hiro','Ines','Jonas'])[1 + i % 10] || ' ' ||
            (ARRAY['Silva','Martin','Okafor','Tanaka','Novak','Berg'])[1 + i % 6],
            'customer' || i || '@example.com',
            (ARRAY['PT','FR','NG','JP','DE','SE','US','BR'])[1 + i % 8],
            (ARRAY['enterprise','smb','consumer'])[1 + i % 3],
            timestamptz '2025-01-01 00:00:00+00' + (i || ' days')::interval
     FROM generate_series(1, 60) AS i ON CONFLICT DO NOTHING`,
  `INSERT INTO demo.products
     SELECT i, (ARRAY['Sensor','Gateway','Cable','Licence','Support plan'])[1 + i % 5] || ' ' || chr(64 + i),
            (ARRAY['hardware','hardware','accessory','software','service'])[1 + i % 5],
            round((9.5 + (i * 37) % 400)::numeric, 2)
     FROM generate_series(1, 20) AS i ON CONFLICT DO NOTHING`,
  `INSERT INTO demo.orders
     SELECT i, 1 + (i * 7) % 60, 1 + (i * 3) % 20, 1 + i % 5,
            round(((1 + i % 5) * (9.5 + ((1 + (i * 3) % 20) * 37) % 400))::numeric, 2),
            (ARRAY['paid','shipped','refunded','pending'])[1 + i % 4],
            (ARRAY['EU','EU','US','APAC','LATAM'])[1 + i % 5],
            timestamptz '2025-06-01 00:00:00+00' + (i * 5 || ' hours')::interval
     FROM generate_series(1, 600) AS i ON CONFLICT DO NOTHING`,
];

const ENTRIES = [
  {
    target_name: 'customers',
    summary: 'Customers: name, email, country and segment',
    columns: ['id', 'name', 'email', 'country', 'segment', 'created_at'],
  },
  {
    target_name: 'products',
    summary: 'Product list with category and price',
    columns: ['id', 'name', 'category', 'price'],
  },
  {
    target_name: 'orders',
    summary: 'Orders with quantity, total, status and region',
    columns: ['id', 'customer_id', 'product_id', 'quantity', 'total', 'status', 'region', 'ordered_at'],
  },
];

export async function seedDemoDatasource(db: Db): Promise<{ seeded: boolean }> {
  await db.execute(sql.raw('CREATE SCHEMA IF NOT EXISTS demo'));
  for (const statement of TABLES) await db.execute(sql.raw(statement));
  for (const statement of DATA) await db.execute(sql.raw(statement));
  // Statistics for the planner (PGlite has no autovacuum to gather them; its plan-cost check relies on them).
  await db.execute(sql.raw('ANALYZE demo.customers, demo.products, demo.orders'));
  let seeded = false;
  for (const entry of ENTRIES) {
    const [existing] = await db
      .select({ id: catalogEntries.id })
      .from(catalogEntries)
      .where(and(eq(catalogEntries.datasourceName, 'demo'), eq(catalogEntries.targetName, entry.target_name)))
      .limit(1);
    if (existing) continue;
    await createCatalogEntry(
      db,
      {
        datasource_id: 'demo',
        datasource_name: 'demo',
        target_name: entry.target_name,
        target_location: `demo.${entry.target_name}`,
        summary: entry.summary,
        scan_policy: 'manual',
        metadata: { seeded: true, environment: 'builtin' },
        schema: { columns: entry.columns },
      },
      { id: 'system', email: 'system', ipAddress: '' },
    );
    seeded = true;
  }
  return { seeded };
}
