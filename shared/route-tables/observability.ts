// Rows of the route table for the admin observability endpoints (issue 4); merged into shared/routes.ts.
import type { RouteSpec } from '../http/route.ts';

export const observabilityRoutes = {} satisfies Record<string, RouteSpec>;
