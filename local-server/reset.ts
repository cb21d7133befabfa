// npm run reset: starts local state again from nothing (the data directory: the embedded database, the first admin,
// the JWT secret). A database named by db.dsn elsewhere (PostgreSQL) is not touched.
import { ConfigError, loadConfig } from '#shared/core/config/load.ts';
import { resetDataDir } from './data-dir.ts';

try {
  const config = loadConfig({ argv: process.argv.slice(2), env: process.env });
  const outcome = resetDataDir(config.data_dir);
  if ('running' in outcome) {
    console.error(
      `reset: npm start is running on ${outcome.dir} (pid ${outcome.running}); stop it first (Ctrl-C)`,
    );
    process.exit(1);
  }
  if ('nothing' in outcome) console.log(`reset: nothing to remove (${outcome.nothing} does not exist)`);
  else {
    console.log(
      `reset: removed ${outcome.removed} (the embedded database, the first admin and the JWT secret); the next npm start creates them again`,
    );
  }
  if (config.db.dsn && !config.db.dsn.startsWith('pglite:')) {
    console.log('reset: db.dsn names another database; it was not touched');
  }
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  console.error(`reset: ${err.message}`);
  process.exit(2);
}
