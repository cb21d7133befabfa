// The route table: the one source of truth for every HTTP endpoint. Each feature keeps its rows in
// shared/<feature>/routes.ts; they are merged here, in this order, and everything reads the merged table. The local
// server mounts these rows, the CDK stack makes one Lambda per distinct handler and one API Gateway route per row, and
// the OpenAPI document is generated from them. Adding an endpoint = one row in its feature's routes.ts + one file
// under functions/<feature>/ + its tests (CONTRIBUTING.md, "Adding an endpoint").
import * as z from 'zod';
import { alertRoutes } from './alerts/routes.ts';
import { auditRoutes } from './audit/routes.ts';
import { catalogRoutes } from './catalog/routes.ts';
import type { Config } from './core/config/schema.ts';
import type { RouteSpec } from './core/http/route.ts';
import { deviceRoutes } from './devices/routes.ts';
import { exportRoutes } from './exports/routes.ts';
import { healthRoutes } from './health/routes.ts';
import { identityRoutes } from './identity/routes.ts';
import { metaRoutes } from './meta/routes.ts';
import { observabilityRoutes } from './observability/routes.ts';
import { policyRoutes } from './policy/routes.ts';
import { requestRoutes } from './requests/routes.ts';

export { cliSigninEnabled } from './identity/routes.ts';

export const routes = {
  ...healthRoutes,
  ...metaRoutes,
  ...identityRoutes,
  ...auditRoutes,
  ...deviceRoutes,
  ...observabilityRoutes,
  ...requestRoutes,
  ...catalogRoutes,
  ...policyRoutes,
  ...alertRoutes,
  ...exportRoutes,
} satisfies Record<string, RouteSpec>;

export type RouteId = keyof typeof routes;
export const routeList: ReadonlyArray<[RouteId, RouteSpec]> = Object.entries(routes) as Array<
  [RouteId, RouteSpec]
>;

/**
 * What answers a request that no row matches: the HTTP API's `$default` route in AWS, and the local server's
 * fallback, so both answer 404 {error: 'not_found', message} with the same code.
 */
export const fallback = { handler: 'meta/not-found' } as const;

/** Functions run on a schedule (EventBridge in AWS, timers in the local server). */
export const schedules = {
  healthProbe: {
    handler: 'health/probe',
    summary:
      'Background health probe; also prunes expired replay records, sign-ins and sign-in failures past their window',
    everyMs: (config: Config) => config.health.probe_interval,
  },
  rollupFold: {
    handler: 'observability/fold',
    summary:
      'Folds newly stored device events into the observability rollups (reads add the events not folded yet)',
    everyMs: (config: Config) => config.events.fold_interval,
  },
  eventPartitions: {
    handler: 'observability/partitions',
    summary:
      'Creates the daily partitions of the events events.partitions_ahead days ahead, and moves stray rows out of the default partition',
    everyMs: (config: Config) => config.events.maintenance_interval,
  },
  eventArchive: {
    handler: 'observability/archive',
    summary:
      'Archives each closed hour of events as Parquet with a manifest (events.archive), from its watermark on',
    everyMs: (config: Config) => config.events.archive.interval,
    // No archive configured: no function, no rule, no timer.
    runsWhen: (config: Config) => config.events.archive.target !== 'none',
  },
  auditAnchor: {
    handler: 'audit/anchor',
    summary:
      "Signs the audit chain's head and writes it as an anchor outside the database (audit.anchors: the Object Lock bucket)",
    everyMs: (config: Config) => config.audit.anchors.interval,
    // No anchor store configured: no function, no rule, no timer.
    runsWhen: (config: Config) => config.audit.anchors.target !== 'none',
  },
  requestExpiry: {
    handler: 'requests/expire',
    summary: 'Data-access requests past valid_until become expired; their environments are torn down',
    everyMs: (config: Config) => config.requests.expiry_interval,
  },
  alerts: {
    handler: 'alerts/derive',
    summary:
      'Derives fleet alerts from the inventory reported since the last pass and the denied-call spike, then delivers the webhooks due',
    everyMs: (config: Config) => config.alerts.interval,
  },
  exportDelivery: {
    handler: 'exports/deliver',
    summary:
      'Streams the stored events to each enabled export destination from its cursor (at least once), retrying with backoff',
    everyMs: (config: Config) => config.exports.interval,
  },
} as const;
export type ScheduleId = keyof typeof schedules;

/** Whether a schedule runs under `config` (a row without `runsWhen` always does). */
export const scheduleRuns = (id: ScheduleId, config: Config): boolean => {
  const row = schedules[id];
  return !('runsWhen' in row) || row.runsWhen(config);
};

export const scheduleInput = z.object({}).passthrough();
