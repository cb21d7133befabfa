// Who is calling, as the users table says now. A token proves who signed in; what that person may do is read from
// the database on every request, so a user deleted, disabled or demoted loses access at once, not when their token
// ends. One indexed read by key per request (users' primary key or its idp_subject index), made before the route's
// own statement: the role decides whether that statement runs at all (docs/operations.md, "Who may call"). An admin
// read makes it inside its own statement instead (read-guard.ts).
//
// - A local token (a sign-in or a CLI sign-in) names the user by id; a CLI sign-in approved by a person of the
//   identity provider names them by their IdP subject.
// - An IdP token names its person by subject. The first token of a subject makes its row, with the roles the
//   documented mapping gives (docs/identity-provider.md): the values of auth.idp_roles_claim that are `admin` or `user`.
//   From then on the row's roles hold, whatever later tokens claim.
// - The log shipper's service token and auth.idp_bypass (local development) read nothing.
import { randomUUID } from 'node:crypto';
import { type SQL, sql } from 'drizzle-orm';
import { auditInsertSql } from '../../audit/audit.ts';
import type { Config } from '../config/schema.ts';
import type { Db } from '../db/database.ts';
import { col, queryRows, type RowOf } from '../db/query.ts';
import { jsonParam, textParam, uuidParam } from '../db/sql-values.ts';
import { unauthenticated } from '../errors.ts';
import {
  type AuthenticatedToken,
  authenticate,
  type ServiceTokenKey,
  servicePrincipal,
} from './authenticate.ts';
import { rolesFrom } from './local-tokens.ts';
import type { Principal } from './principal.ts';

export interface CallerRequest {
  config: Config;
  db: Db;
  headers: Record<string, string | undefined>;
  sourceIp: string;
}

const USER_ROW = {
  id: col.text,
  idp_subject: col.nullable(col.text),
  email: col.text,
  name: col.text,
  roles: col.text,
  disabled: col.bool,
};
type UserRecord = RowOf<typeof USER_ROW>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const USER_COLUMNS = sql`id::text AS id, idp_subject, email, name, roles::text AS roles,
  (disabled_at IS NOT NULL) AS disabled`;

const userGone = () =>
  unauthenticated('The user this token names no longer exists; sign in again.', 'invalid_token');

/** The caller as its row says, keeping what the token was for. */
function principalOf(row: UserRecord, tokenUse: Principal['tokenUse']): Principal {
  if (String(row.disabled) === 'true') {
    throw unauthenticated('This account is disabled; an admin can enable it again.', 'account_disabled');
  }
  return {
    subject: row.idp_subject ?? row.id,
    email: row.email,
    name: row.name,
    // roles::text is the jsonb array's JSON text on every driver.
    roles: rolesFrom(JSON.parse(row.roles)),
    tokenUse,
  };
}

/** The condition on `users` of the row a verified token names: its IdP subject, or (local tokens) its id. */
export function userMatch(token: AuthenticatedToken): SQL {
  const subject = token.principal.subject;
  const local =
    token.via === 'local' && UUID.test(subject)
      ? sql` OR (id = ${uuidParam(subject)} AND idp_subject IS NULL)`
      : sql``;
  return sql`(idp_subject = ${textParam(subject)}${local})`;
}

/** The columns of USER_ROW as one JSON text, for a statement that returns the caller beside its own rows. */
export const USER_JSON = sql`json_build_object('id', id::text, 'idp_subject', idp_subject, 'email', email,
  'name', name, 'roles', roles, 'disabled', disabled_at IS NOT NULL)::text`;

/** The caller a USER_JSON text describes (401 when disabled). */
export function principalOfJson(text: string, tokenUse: Principal['tokenUse']): Principal {
  const row = JSON.parse(text) as Omit<UserRecord, 'roles'> & { roles: unknown };
  return principalOf({ ...row, roles: JSON.stringify(row.roles) }, tokenUse);
}

async function findUser(db: Db, token: AuthenticatedToken): Promise<UserRecord | undefined> {
  const [row] = await queryRows(
    db,
    sql`SELECT ${USER_COLUMNS} FROM users WHERE ${userMatch(token)} LIMIT 1`,
    USER_ROW,
  );
  return row;
}

/** The first token of an IdP subject: its row, with the mapped roles, audited `user.provisioned` in the same statement. */
async function provisionIdpUser(db: Db, person: Principal, sourceIp: string): Promise<UserRecord> {
  const id = randomUUID();
  const inserted = sql`EXISTS (SELECT 1 FROM ins)`;
  const audit = auditInsertSql(
    {
      actionType: 'user.provisioned',
      actor: { id: person.subject, email: person.email, ipAddress: sourceIp },
      resourceType: 'user',
      resourceId: id,
      metadata: { idp_subject: person.subject, email: person.email, roles: person.roles },
    },
    inserted,
  );
  const rows = await queryRows(
    db,
    sql`WITH ins AS (INSERT INTO users (id, email, name, roles, idp_subject)
          VALUES (${uuidParam(id)}, ${person.email}, ${person.name}, ${jsonParam(person.roles)}, ${textParam(person.subject)})
          ON CONFLICT (idp_subject) DO NOTHING RETURNING ${USER_COLUMNS}),
        audit AS (${audit} RETURNING 1)
        SELECT * FROM ins`,
    USER_ROW,
  );
  // Another request made it first: that row holds.
  return rows[0] ?? ((await findUser(db, { principal: person, via: 'idp' })) as UserRecord);
}

/** Who a request's token says is calling: the route's service, the bypass developer, or a person to look up. */
export type TokenCaller = { principal: Principal; via: 'service' } | AuthenticatedToken;

/**
 * The caller as the request's token states it, with no database read: the route's service token when it names one
 * and the request carries it, else the verified bearer token (401 when there is none or it is not valid).
 */
export async function tokenCaller(
  request: CallerRequest,
  serviceToken?: ServiceTokenKey,
): Promise<TokenCaller> {
  const service = serviceToken ? servicePrincipal(request.config, serviceToken, request.headers) : undefined;
  if (service) return { principal: service, via: 'service' };
  return authenticate(request.config, request.headers);
}

/**
 * The person a verified token names as the users table has them now (401 invalid_token when the user is gone, 401
 * account_disabled when disabled; the roles are the row's). The first token of an IdP subject makes its row.
 */
export async function personNow(request: CallerRequest, token: AuthenticatedToken): Promise<Principal> {
  const row =
    (await findUser(request.db, token)) ??
    (token.via === 'idp' ? await provisionIdpUser(request.db, token.principal, request.sourceIp) : undefined);
  if (!row) throw userGone();
  return principalOf(row, token.principal.tokenUse);
}

/** The caller a token names: the service or the bypass developer as the token has them, a person as personNow. */
export async function callerOf(request: CallerRequest, token: TokenCaller): Promise<Principal> {
  if (token.via === 'service' || token.via === 'bypass') return token.principal;
  return personNow(request, token);
}

/**
 * The caller of a route that takes a bearer token: the route's service token when it names one and the request
 * carries it; else the token's person as the users table has them now (personNow).
 */
export async function identifyCaller(
  request: CallerRequest,
  serviceToken?: ServiceTokenKey,
): Promise<Principal> {
  return callerOf(request, await tokenCaller(request, serviceToken));
}
