// npm run bench:migrations — time to open an empty PGlite and apply every migration, median of 5 runs.
import { connectDatabase } from '#shared/core/db/connect.ts';
import { migrate, readMigrations } from '#shared/core/db/migrate.ts';
import { testConfig } from '#test/support/service.ts';

const runs: Array<{ open: number; migrate: number }> = [];
for (let i = 0; i < 5; i++) {
  const t0 = performance.now();
  const database = await connectDatabase(testConfig({ db: { dsn: 'pglite:memory' } }));
  const t1 = performance.now();
  await migrate(database.db);
  const t2 = performance.now();
  await database.close();
  runs.push({ open: t1 - t0, migrate: t2 - t1 });
}
const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const statements = readMigrations().reduce((n, m) => n + m.statements.length, 0);
console.log(
  `\nbench:migrations — PGlite in memory, ${readMigrations().length} migrations, ${statements} statements, 5 runs`,
);
console.log(`open PGlite: median ${median(runs.map((r) => r.open)).toFixed(0)} ms`);
console.log(`apply all migrations from empty: median ${median(runs.map((r) => r.migrate)).toFixed(0)} ms`);
