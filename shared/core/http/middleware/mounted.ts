// A route that its config does not mount (CLI sign-in without a dashboard URL) answers as an unknown path does.
import { notFound } from '../../errors.ts';
import type { RouteSpec } from '../route.ts';
import { type ServiceMiddleware, stateOf } from './types.ts';

export function mounted(route: RouteSpec): ServiceMiddleware {
  return {
    name: 'mounted',
    before: async (request) => {
      if (route.mountedWhen && !route.mountedWhen(stateOf(request).config)) throw notFound('No such route.');
    },
  };
}
