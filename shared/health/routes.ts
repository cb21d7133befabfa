// The health route of the route table; merged into shared/routes.ts.
// Each row is exported on its own, marked pure, and the table lists them: a function's bundle takes its own rows
// and leaves the others out (infra/route-tables.ts). So a row holds nothing esbuild would keep for its side effects
// (body limits are numbers, not products; `envelope(...)` is marked pure too).
import * as z from 'zod';
import type { RouteSpec } from '../core/http/route.ts';
import { defineRoute } from '../core/http/route.ts';
import { errorBody } from '../core/schemas/common.ts';
import { healthView } from './schemas.ts';

export const healthcheck = /* @__PURE__ */ defineRoute({
  method: 'GET',
  path: '/v1/healthcheck',
  handler: 'health/healthcheck',
  auth: 'public',
  tags: ['health'],
  summary: 'Service status and system information; 503 when the database is unreachable',
  response: healthView,
  // Unavailable: the health report itself (status "unavailable"), or {error, message} when the service cannot
  // even build it.
  errorBodies: { 503: /* @__PURE__ */ z.union([healthView, errorBody]) },
});

export const healthRoutes = {
  healthcheck,
} satisfies Record<string, RouteSpec>;
