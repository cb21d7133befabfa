// npm run db:functions -- <name>: writes migrations/NNNN_<name>.sql redefining the SQL functions whose TypeScript
// source changed since the newest migration that defines them (scripts/function-migrations.ts).
import { writeFunctionMigration } from './function-migrations.ts';

const name = process.argv[2];
if (!name) {
  console.error('usage: npm run db:functions -- <migration_name>');
  process.exit(2);
}
const written = writeFunctionMigration(name);
console.log(written ? `wrote migrations/${written}` : 'every generated function is current; nothing written');
