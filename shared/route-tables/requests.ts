// Rows of the route table for data-access requests, catalog and audit extras (issue 5); merged into shared/routes.ts.
import type { RouteSpec } from '../http/route.ts';

export const requestRoutes = {} satisfies Record<string, RouteSpec>;
