// The body as received is bounded before anything reads it (RouteSpec.maxBody).
import { tooLarge } from '../../errors.ts';
import type { RouteSpec } from '../route.ts';
import type { ServiceMiddleware } from './types.ts';

export function bodyLimit(route: RouteSpec): ServiceMiddleware {
  return {
    name: 'bodyLimit',
    before: async ({ context }) => {
      if (route.maxBody && (context.rawBodyBytes ?? 0) > route.maxBody.bytes) {
        throw tooLarge(route.maxBody.code, `The request body is larger than ${route.maxBody.bytes} bytes.`);
      }
    },
  };
}
