import type { Config } from '#shared/config/schema.ts';
import { migrate } from '#shared/db/migrate.ts';
import { seedDemoDatasource } from '#shared/domain/environments/demo.ts';
import { ensureBootstrapAdmin } from '#shared/domain/users.ts';
import { createLogger, type Logger } from '#shared/logger.ts';
import { fallback, routeList, type ScheduleId, scheduleRuns, schedules } from '#shared/routes.ts';
import { createRuntime, type Runtime, setRuntime } from '#shared/runtime.ts';
import { type EmulatorOptions, lambdaContext, type RunningEmulator, startApiGateway } from './api-gateway.ts';

export interface LocalService {
  url: string;
  runtime: Runtime;
  emulator: RunningEmulator;
  admin: { created: boolean; email: string; generatedPassword?: string };
  /** Runs a scheduled function now, as EventBridge would. */
  runSchedule(id: ScheduleId): Promise<unknown>;
  stop(): Promise<void>;
}

export interface StartOptions {
  config: Config;
  log?: Logger;
  /** Run scheduled functions on their intervals (npm start does; tests call runSchedule instead). */
  schedules?: boolean;
  /**
   * Seed the demo datasource (schema `demo` and its catalog entries; idempotent) when environments are builtin and
   * env = "local" (never into a prod database; Lambda never runs this file).
   * Defaults to `schedules`, i.e. on for npm start, off for tests, which seed it themselves when they need it.
   */
  demoData?: boolean;
  host?: string;
  /** Sees every response a function gave (see EmulatorOptions.onResponse). */
  onResponse?: EmulatorOptions['onResponse'];
}

/**
 * The local service: opens the database, applies migrations, creates the first admin, installs the runtime the
 * handlers use, and serves the route table through the API Gateway emulator.
 */
export async function startLocalService(options: StartOptions): Promise<LocalService> {
  const { config } = options;
  const log = options.log ?? createLogger({ service: 'agent-control-plane', component: 'local' });
  // Where start-up time goes, logged once it listens (bench:newcomer reads it).
  const phases: Record<string, number> = {};
  let mark = performance.now();
  const phase = (name: string) => {
    const now = performance.now();
    phases[name] = Math.round(now - mark);
    mark = now;
  };
  const runtime = await createRuntime(config);
  phase('open_database_ms');
  const { applied } = await migrate(runtime.database.db);
  if (applied.length) log.info('migrations applied', { applied });
  phase('migrations_ms');
  const admin = await ensureBootstrapAdmin(runtime.database.db, {
    email: config.bootstrap.admin_email,
    password: config.bootstrap.admin_password,
    allowGenerated: config.env === 'local' && config.auth.provider === 'local',
  });
  phase('bootstrap_admin_ms');
  setRuntime(runtime);
  const demo =
    (options.demoData ?? options.schedules === true) &&
    config.envsvc.provider === 'builtin' &&
    config.env === 'local';
  if (demo && (await seedDemoDatasource(runtime.database.db)).seeded) {
    log.info('demo datasource seeded: schema demo (customers, products, orders) and its catalog entries');
  }
  phase('demo_data_ms');
  if (!config.dashboard_url) {
    log.warn(
      'CLI sign-in is disabled: no dashboard URL (--dashboard-url / SVC_DASHBOARD_URL); /v1/auth/cli/* is not mounted and no new device can register',
    );
  }
  if (config.auth.provider === 'idp' && !config.auth.idp_bypass && !config.auth.idp_client_id) {
    log.warn(
      'the console cannot sign in: auth.provider = "idp" without auth.idp_client_id (its public OIDC client; docs/identity-provider.md)',
    );
  }
  const emulator = await startApiGateway(
    { config, routes: routeList, fallbackHandler: fallback.handler, log, onResponse: options.onResponse },
    config.port,
    options.host,
  );
  phase('listen_ms');
  log.info('service started', { url: emulator.url, ...phases });

  const loaded = new Map<string, Promise<(event: unknown, ctx: unknown) => Promise<unknown>>>();
  const runSchedule = async (id: ScheduleId) => {
    const schedule = schedules[id];
    let fn = loaded.get(id);
    if (!fn) {
      fn = import(new URL(`../functions/${schedule.handler}.ts`, import.meta.url).href).then(
        (m) => m.handler,
      );
      loaded.set(id, fn);
    }
    const event = {
      source: 'aws.events',
      'detail-type': 'Scheduled Event',
      time: new Date().toISOString(),
      detail: {},
    };
    return (await fn)(event, lambdaContext(id, crypto.randomUUID()));
  };
  const timers: NodeJS.Timeout[] = [];
  if (options.schedules) {
    for (const id of Object.keys(schedules) as ScheduleId[]) {
      if (!scheduleRuns(id, config)) continue;
      const every = schedules[id].everyMs(config);
      const tick = () =>
        runSchedule(id).catch((err) =>
          log.warn('scheduled function failed', { schedule: id, error: (err as Error).message }),
        );
      timers.push(setInterval(tick, every));
      void tick();
    }
  }
  return {
    url: emulator.url,
    runtime,
    emulator,
    admin,
    runSchedule,
    stop: async () => {
      for (const t of timers) clearInterval(t);
      await emulator.close();
      setRuntime(undefined);
      await runtime.database.close();
    },
  };
}
