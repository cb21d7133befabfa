// What the stack builds from the route table: one function per distinct handler (rows that name the same handler
// are aliases and share it), one API route per mounted row, one schedule per `schedules` row.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Config } from '#shared/core/config/schema.ts';
import type { RouteKind, RouteSpec, ServiceTokenKey } from '#shared/core/http/route.ts';
import { fallback, routeList, type ScheduleId, scheduleRuns, schedules } from '#shared/routes.ts';

export type FunctionKind = RouteKind | 'scheduled';

export interface Sizing {
  memoryMb: number;
  timeoutSeconds: number;
}

/**
 * Memory and timeout per route kind. Every HTTP timeout stays under API Gateway's 30 s and still covers an Aurora
 * resume from auto-pause (~15 s; the Data API client retries DatabaseResumingException for up to 20 s). Writes get
 * more memory (hence CPU) for scrypt password hashing; ingest and query move the largest payloads.
 */
export const SIZING: Record<FunctionKind, Sizing> = {
  read: { memoryMb: 512, timeoutSeconds: 25 },
  write: { memoryMb: 1024, timeoutSeconds: 25 },
  ingest: { memoryMb: 1024, timeoutSeconds: 28 },
  query: { memoryMb: 1024, timeoutSeconds: 28 },
  scheduled: { memoryMb: 512, timeoutSeconds: 60 },
};
const KIND_ORDER: readonly FunctionKind[] = ['read', 'write', 'ingest', 'query', 'scheduled'];

export interface PlannedRoute {
  id: string;
  method: RouteSpec['method'];
  path: string;
}

export interface PlannedSchedule {
  id: string;
  everyMs: number;
}

export interface PlannedFunction {
  /** Route-table handler, e.g. "identity/users-create". */
  handler: string;
  /** Absolute path of functions/<handler>.ts. */
  entry: string;
  /** Its feature (featureOf): the nested stack that holds its function and routes. */
  feature: string;
  /** CDK construct id, e.g. "AdminUsersCreate". */
  constructId: string;
  kind: FunctionKind;
  sizing: Sizing;
  routes: PlannedRoute[];
  schedules: PlannedSchedule[];
  /** It answers the HTTP API's `$default` route: whatever no row matches (shared/routes.ts `fallback`). */
  defaultRoute: boolean;
  /** Reads the environment-service token (the data-access request flow and the probe that checks the service). */
  usesEnvironmentService: boolean;
  /** Service tokens its routes accept (RouteSpec.serviceToken): it alone gets their secrets' ARNs and read access. */
  serviceTokens: ServiceTokenKey[];
}

/**
 * The feature a handler belongs to: the first segment of its path under functions/ ("requests/query" → "requests").
 * Each feature's functions and routes get a nested stack of their own (infra/constructs/feature-stack.ts), so a
 * handler moved to another folder moves to that folder's stack with no list to update.
 */
export function featureOf(handler: string): string {
  const [feature] = handler.split('/');
  if (!feature || feature === handler) throw new Error(`handler "${handler}" is not in a feature folder`);
  return feature;
}

export function constructIdFor(handler: string): string {
  return handler
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((part) => part[0]!.toUpperCase() + part.slice(1))
    .join('');
}

/** The module that calls the external environment service (envsvc.provider = "http"). */
export const ENVIRONMENT_SERVICE_CLIENT = 'shared/requests/environments/http.ts';

const IMPORT_SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"]([^'"]+)['"]/g;

/** The project's own TypeScript files `entry` imports, directly or not (statically or with `import()`). */
export function projectImports(entry: string, projectRoot: string): Set<string> {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file) || !existsSync(file)) return;
    seen.add(file);
    // Type-only imports vanish at run time.
    const code = readFileSync(file, 'utf8').replace(/^\s*(?:import|export)\s+type\b[^;]*;/gm, '');
    for (const [, specifier] of code.matchAll(IMPORT_SPECIFIER)) {
      const target = specifier!.startsWith('#shared/')
        ? join(projectRoot, 'shared', specifier!.slice('#shared/'.length))
        : specifier!.startsWith('#functions/')
          ? join(projectRoot, 'functions', specifier!.slice('#functions/'.length))
          : specifier!.startsWith('.')
            ? join(dirname(file), specifier!)
            : undefined;
      if (target?.endsWith('.ts')) visit(target);
    }
  };
  visit(entry);
  return seen;
}

/**
 * Whether a function calls the environment service, and so gets its token's ARN and read access to it: only with
 * envsvc.provider = "http", and only when its code can reach the HTTP provider. With the builtin provider no function
 * talks to an environment service, and the stack creates no token.
 */
export function usesEnvironmentService(config: Config, entry: string, projectRoot: string): boolean {
  return (
    config.envsvc.provider === 'http' &&
    projectImports(entry, projectRoot).has(join(projectRoot, ENVIRONMENT_SERVICE_CLIENT))
  );
}

const isMounted = (route: RouteSpec, config: Config) => !route.mountedWhen || route.mountedWhen(config);

export function planFunctions(config: Config, projectRoot: string): PlannedFunction[] {
  const byHandler = new Map<string, PlannedFunction>();
  const entryOf = (handler: string) => join(projectRoot, 'functions', `${handler}.ts`);
  const get = (handler: string): PlannedFunction => {
    let planned = byHandler.get(handler);
    if (!planned) {
      planned = {
        handler,
        entry: entryOf(handler),
        feature: featureOf(handler),
        constructId: constructIdFor(handler),
        kind: 'read',
        sizing: SIZING.read,
        routes: [],
        schedules: [],
        defaultRoute: false,
        usesEnvironmentService: usesEnvironmentService(config, entryOf(handler), projectRoot),
        serviceTokens: [],
      };
      byHandler.set(handler, planned);
    }
    return planned;
  };
  const widen = (planned: PlannedFunction, kind: FunctionKind) => {
    if (KIND_ORDER.indexOf(kind) > KIND_ORDER.indexOf(planned.kind)) {
      planned.kind = kind;
      planned.sizing = SIZING[kind];
    }
  };

  for (const [id, route] of routeList) {
    if (!isMounted(route, config)) continue;
    const planned = get(route.handler);
    planned.routes.push({ id, method: route.method, path: route.path });
    if (route.serviceToken && !planned.serviceTokens.includes(route.serviceToken)) {
      planned.serviceTokens.push(route.serviceToken);
    }
    widen(planned, route.kind ?? 'read');
  }

  get(fallback.handler).defaultRoute = true;

  for (const [id, row] of Object.entries(schedules)) {
    if (!scheduleRuns(id as ScheduleId, config)) continue;
    const planned = get(row.handler);
    planned.schedules.push({ id, everyMs: row.everyMs(config) });
    widen(planned, 'scheduled');
  }

  for (const planned of byHandler.values()) {
    if (!existsSync(planned.entry)) {
      throw new Error(`route table names handler "${planned.handler}" but ${planned.entry} does not exist`);
    }
  }
  return [...byHandler.values()].sort((a, b) => a.handler.localeCompare(b.handler));
}
