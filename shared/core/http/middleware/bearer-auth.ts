// Who is calling, for the routes a person signs in to (user, admin, and register's device+user): the service token a
// route names (the log shipper's, on audit ingest only), or the bearer token's person as the users table has them
// now (shared/core/auth/caller.ts), so a deleted, disabled or demoted user loses access at once. For an admin read
// (GET) whose session token names an admin, that row is read by the route's own first statement instead of a lookup
// before it (shared/core/auth/read-guard.ts): one round trip, and no answer leaves before the row has been judged.
// The authenticators (jose, the OIDC verifier) are imported by the first invocation that needs them, so that the
// functions of public and device routes never initialise them.
import { isAdmin } from '../../auth/principal.ts';
import type { ReadGuard } from '../../auth/read-guard.ts';
import { forbidden, ServiceError, unauthenticated } from '../../errors.ts';
import type { ServiceContext } from '../context.ts';
import type { RouteSpec } from '../route.ts';
import { type ServiceMiddleware, stateOf } from './types.ts';

let callerImport: Promise<typeof import('../../auth/caller.ts')> | undefined;
let guardImport: Promise<typeof import('../../auth/read-guard.ts')> | undefined;

export const takesBearerToken = (route: RouteSpec): boolean =>
  route.auth === 'user' || route.auth === 'admin' || route.auth === 'device+user';

/** The read guards of the requests in flight. */
const guards = new WeakMap<ServiceContext, ReadGuard>();

export function bearerAuth(route: RouteSpec): ServiceMiddleware {
  const adminRead = route.auth === 'admin' && route.method === 'GET';
  return {
    name: 'bearerAuth',
    before: async (request) => {
      if (!takesBearerToken(route)) return;
      const state = stateOf(request);
      callerImport ??= import('../../auth/caller.ts');
      const { tokenCaller, callerOf } = await callerImport;
      const caller = {
        config: state.config,
        db: state.db,
        headers: state.headers,
        sourceIp: state.sourceIp ?? '',
      };
      const token = await tokenCaller(caller, route.serviceToken);
      if (adminRead && token.via !== 'service' && token.via !== 'bypass' && isAdmin(token.principal)) {
        guardImport ??= import('../../auth/read-guard.ts');
        const guard = (await guardImport).readGuard(caller, token);
        guards.set(request.context, guard);
        request.context.db = guard.db;
        // The token's admin, until the row confirms it (after, or onError for an answer that is not the route's).
        request.context.principal = token.principal;
        return;
      }
      const principal = await callerOf(caller, token);
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
    after: async (request) => {
      const guard = guards.get(request.context);
      if (guard) request.context.principal = await guard.settle();
    },
    onError: async (request) => {
      const guard = guards.get(request.context);
      if (!guard) return;
      guards.delete(request.context);
      try {
        await guard.settle();
      } catch (err) {
        // A caller the row refuses gets that answer, whatever the route would have said; a failed lookup leaves
        // the route's own error (the database's fault answers either way).
        if (err instanceof ServiceError && (err.kind === 'unauthenticated' || err.kind === 'forbidden'))
          request.error = err;
      }
    },
  };
}
