// npm start: the whole service on this machine, no AWS, no Docker. Embedded PGlite unless db.dsn says otherwise.
import { consoleUsesIdp } from '#console/settings.ts';
import { idpIssuer } from '#shared/core/auth/idp-tokens.ts';
import {
  COMMAND_LINE_OPTIONS,
  ConfigError,
  ENVIRONMENT_OVERRIDES,
  loadConfig,
} from '#shared/core/config/load.ts';
import { rootLogger } from '#shared/core/logger.ts';
import { consoleDashboardOnPort } from './console.ts';
import { markRunning } from './data-dir.ts';
import { startLocalService } from './service.ts';

const USAGE = [
  'npm start [-- options]: the whole service on this machine (embedded PGlite unless db.dsn says otherwise).',
  '',
  'options (each also an environment variable):',
  ...Object.entries(COMMAND_LINE_OPTIONS).map(
    ([name, o]) => `  ${`${name} <value>`.padEnd(24)} ${o.env.padEnd(18)} ${o.help}`,
  ),
  '',
  'environment only:',
  ...Object.entries(ENVIRONMENT_OVERRIDES).map(([name, key]) => `  ${name.padEnd(24)} ${key}`),
  '',
  'Every other setting is in the config file (docs/configuration.md).',
].join('\n');

/** One line for a port or host the server cannot listen on, naming it and what to do; undefined for anything else. */
function cannotListen(err: unknown, config: { host: string; port: number }): string | undefined {
  const { code } = err as NodeJS.ErrnoException;
  const where = `${config.host}:${config.port}`;
  const another = `npm start -- --port ${config.port === 8081 ? 8082 : 8081} (or PORT=…)`;
  switch (code) {
    case 'EADDRINUSE':
      return `Cannot listen on ${where}: the port is taken (another npm start?). Stop what uses it, or choose another port: ${another}`;
    case 'EACCES':
      return `Cannot listen on ${where}: not allowed (ports below 1024 need privileges). Choose another port: ${another}`;
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
      return `Cannot listen on ${where}: ${config.host} is not an address of this machine. Use --host 127.0.0.1 (or HOST)`;
    default:
      return undefined;
  }
}

async function main() {
  const argv = process.argv.slice(2);
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  let config: ReturnType<typeof loadConfig>;
  let service: Awaited<ReturnType<typeof startLocalService>>;
  try {
    config = loadConfig({ argv, env: process.env });
    if (config.dashboard_url) {
      config = { ...config, dashboard_url: consoleDashboardOnPort(config.dashboard_url, config.port) };
    }
    service = await startLocalService({ config, schedules: true, host: config.host });
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`Refusing to start: ${err.message}`);
      process.exit(2);
    }
    const why = cannotListen(err, config!);
    if (why) {
      console.error(why);
      process.exit(1);
    }
    throw err;
  }
  const { admin, jwtSecret } = service;
  const unmark = markRunning(config.data_dir);
  const lines = [
    '',
    `  Agent control plane listening on ${service.url}`,
    `  database: ${service.runtime.database.description}`,
    jwtSecret === 'configured'
      ? '  JWT secret: configured (auth.jwt_secret / SVC_JWT_SECRET)'
      : `  JWT secret: ${jwtSecret.generated ? 'generated into' : 'read from'} ${jwtSecret.file} (owner-only; kept for later starts)`,
    `  sign-in mode: ${config.auth.provider}${config.auth.idp_bypass ? ' (idp_bypass: local development only)' : ''}${consoleUsesIdp(config) ? `, the console through ${idpIssuer(config)} (client ${config.auth.idp_client_id})` : ''}`,
    `  CLI sign-in (/v1/auth/cli/*): ${config.dashboard_url ? `enabled, dashboard ${config.dashboard_url}` : 'disabled (no --dashboard-url)'}`,
    admin.generatedPassword
      ? `  admin created: ${admin.email} / ${admin.generatedPassword}   (shown once; set SVC_ADMIN_EMAIL/SVC_ADMIN_PASSWORD to choose)`
      : admin.passwordNotApplied
        ? `  admin: ${admin.email} already exists with another password: SVC_ADMIN_PASSWORD was not applied (npm run reset starts again from nothing)`
        : `  admin: ${admin.email}${admin.created ? ' (created)' : ''}`,
    `  try: curl ${service.url}/v1/healthcheck`,
    `  admin console: ${service.url}/console/`,
    `  fleet: npm run agent -- simulate --url ${service.url} --email ${admin.email} --devices 10 --events 2000 (asks the admin password; or set ACP_PASSWORD)${config.dashboard_url ? '' : '   (needs --dashboard-url: without it no new device can register)'}`,
    '',
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    rootLogger.info('shutting down', { signal });
    await service.stop();
    unmark();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

main().catch((err) => {
  console.error('failed to start:', (err as Error).message);
  process.exit(1);
});
