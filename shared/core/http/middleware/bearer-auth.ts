// Who is calling, for the routes a person signs in to (user, admin, and register's device+user): the service token a
// route names (the log shipper's, on audit ingest only), or the bearer token's person as the users table has them
// now (shared/core/auth/caller.ts: one indexed read per request, so a deleted, disabled or demoted user loses access at
// once). The authenticators (jose, the OIDC verifier) are imported by the first invocation that needs them, so that
// the functions of public and device routes never initialise them.
import { isAdmin } from '../../auth/principal.ts';
import { forbidden, unauthenticated } from '../../errors.ts';
import type { RouteSpec } from '../route.ts';
import { type ServiceMiddleware, stateOf } from './types.ts';

let callerImport: Promise<typeof import('../../auth/caller.ts')> | undefined;

export const takesBearerToken = (route: RouteSpec): boolean =>
  route.auth === 'user' || route.auth === 'admin' || route.auth === 'device+user';

export function bearerAuth(route: RouteSpec): ServiceMiddleware {
  return {
    name: 'bearerAuth',
    before: async (request) => {
      if (!takesBearerToken(route)) return;
      const state = stateOf(request);
      callerImport ??= import('../../auth/caller.ts');
      const { identifyCaller } = await callerImport;
      const principal = await identifyCaller(
        { config: state.config, db: state.db, headers: state.headers, sourceIp: state.sourceIp ?? '' },
        route.serviceToken,
      );
      const service = principal.tokenUse === 'service';
      // A CLI sign-in token is a credential for enrollment only (register, the one device+user route): anywhere else
      // it is no credential at all, as a token for another audience is, so 401 (sign in for a session token), not
      // 403 (a signed-in person without the role). 403 is left to the role check.
      if (principal.tokenUse === 'cli' && route.auth !== 'device+user') {
        throw unauthenticated(
          'This token only enrolls a device (POST /v1/devices/register); sign in to the dashboard for a session token.',
          'invalid_token',
        );
      }
      if (route.auth === 'admin' && !service && !isAdmin(principal)) throw forbidden();
      request.context.principal = principal;
    },
  };
}
