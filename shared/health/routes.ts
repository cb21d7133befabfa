// The health route of the route table; merged into shared/routes.ts.
import * as z from 'zod';
import type { RouteSpec } from '../core/http/route.ts';
import { defineRoute } from '../core/http/route.ts';
import { errorBody } from '../core/schemas/common.ts';
import { healthView } from './schemas.ts';

export const healthcheck = defineRoute({
  method: 'GET',
  path: '/v1/healthcheck',
  handler: 'health/healthcheck',
  auth: 'public',
  tags: ['health'],
  summary: 'Service status and system information; 503 when the database is unreachable',
  response: healthView,
  // Unavailable: the health report itself (status "unavailable"), or {error, message} when the service cannot
  // even build it.
  errorBodies: { 503: z.union([healthView, errorBody]) },
});

export const healthRoutes = {
  healthcheck,
} satisfies Record<string, RouteSpec>;
