import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { and, eq, gt, sql } from 'drizzle-orm';
import { recordAudit } from '../audit/audit.ts';
import { issueLocalToken } from '../core/auth/local-tokens.ts';
import type { Principal } from '../core/auth/principal.ts';
import type { Config } from '../core/config/schema.ts';
import type { Db } from '../core/db/database.ts';
import { col, queryRows } from '../core/db/query.ts';
import { cliSignins } from '../core/db/schema.ts';
import { textParam, tsParam } from '../core/db/sql-values.ts';
import { conflict, invalid, notFound, rateLimited, ServiceError } from '../core/errors.ts';
import type { CLI_SIGNIN_STATUSES } from './cli-sign-in-schemas.ts';
import {
  cliExchangeKeys,
  readKeyStates,
  recordSigninFailure,
  refuseWhileLocked,
  signinPolicy,
  sourceKey,
} from './lockouts.ts';

// Browser-brokered sign-in of the endpoint agent: OAuth 2.0 for native apps (RFC 8252) with PKCE S256 (RFC 7636).
// A sign-in records who asks; a signed-in person reads it, then approves it (a one-time code for the agent) or
// refuses it (error=access_denied for the agent, RFC 6749 section 4.1.2.1). The first decision stands.
export const SIGNIN_TTL_MS = 10 * 60_000;
export const CODE_TTL_MS = 60_000;

const sha256 = (text: string) => createHash('sha256').update(text).digest();
const codeHash = (code: string) => sha256(code).toString('hex');

/** RFC 8252 section 7.3: only loopback redirects (http, 127.0.0.1, [::1] or localhost, any port). */
export function checkLoopbackRedirect(uri: string): URL {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    throw invalid('invalid_redirect_uri', 'redirect_uri is not a URL.');
  }
  const loopback = ['127.0.0.1', '[::1]', 'localhost'].includes(url.hostname);
  if (url.protocol !== 'http:' || !loopback || url.username || url.password || url.hash) {
    throw invalid(
      'invalid_redirect_uri',
      'redirect_uri must be a loopback URL: http://127.0.0.1:PORT/..., http://[::1]:PORT/... or http://localhost:PORT/...',
    );
  }
  return url;
}

/** host:port of a loopback redirect, the port always written (a person compares it with what the agent printed). */
export function loopbackAddress(redirectUri: string): string {
  const url = new URL(redirectUri);
  return `${url.hostname}:${url.port || '80'}`;
}

/** The longest User-Agent kept: enough to name a browser and its platform, bounded for the page that shows it. */
export const USER_AGENT_MAX = 256;

/**
 * Who asked, as the authorize request shows it: the agent opens authorize in the person's browser, so these are
 * that browser's address and user agent (not the agent's). A person who sees another address or another program
 * than their own browser was sent a link that someone else started.
 */
export interface SigninAsker {
  sourceIp: string;
  userAgent: string | undefined;
}

/**
 * GET /v1/auth/cli/authorize: stores the sign-in and answers the dashboard's login page for it. Anyone may start one,
 * so each source address (sourceKey: an IPv6 address by its /64) may have at most auth.cli_authorize_max_per_source
 * of them open (within their 10 minutes); past it, 429 too_many_requests with Retry-After until its oldest one ends,
 * and nothing is stored. Counted and inserted in one statement (concurrent requests of one address may pass the
 * bound by as many as run at once).
 */
export async function startCliSignin(
  config: Config,
  db: Db,
  input: { client_id: string; redirect_uri: string; state: string; code_challenge: string },
  asker: SigninAsker,
): Promise<string> {
  checkLoopbackRedirect(input.redirect_uri);
  // One clock for both, so that the page shows a sign-in that lives exactly 10 minutes.
  const now = Date.now();
  const source = sourceKey(asker.sourceIp) ?? null;
  const [row] = await queryRows(
    db,
    sql`WITH open AS (SELECT count(*) AS n, min(expires_at) AS first_end FROM cli_signins
          WHERE source_key = ${textParam(source)} AND expires_at > now()),
        ins AS (INSERT INTO cli_signins (redirect_uri, state, code_challenge, client_id, source_ip, source_key,
                  user_agent, created_at, expires_at)
          SELECT ${input.redirect_uri}, ${input.state}, ${input.code_challenge}, ${input.client_id},
            ${textParam(asker.sourceIp || null)}, ${textParam(source)},
            ${textParam(asker.userAgent ? asker.userAgent.slice(0, USER_AGENT_MAX) : null)},
            ${tsParam(new Date(now))}, ${tsParam(new Date(now + SIGNIN_TTL_MS))}
          FROM open WHERE open.n < ${config.auth.cli_authorize_max_per_source}::int
          RETURNING id::text AS id)
        SELECT (SELECT id FROM ins) AS id,
          (SELECT ceil(extract(epoch FROM first_end - now()))::int FROM open) AS retry_after_s`,
    { id: col.nullable(col.text), retry_after_s: col.nullable(col.number) },
  );
  if (!row?.id) {
    const seconds = Math.max(1, Number(row?.retry_after_s) || 1);
    throw rateLimited(
      'too_many_requests',
      `Too many sign-ins started from your network address (at most ${config.auth.cli_authorize_max_per_source} within 10 minutes): try again in ${seconds} s (Retry-After).`,
      seconds,
    );
  }
  const login = new URL('cli/login', `${(config.dashboard_url as string).replace(/\/+$/, '')}/`);
  login.searchParams.set('request', row.id);
  return login.toString();
}

const NO_SIGNIN =
  "No sign-in request with this id (it may have expired after 10 minutes); run the agent's login again.";

/** A sign-in as the person deciding on it reads it: who asks, where the browser goes back to, and when. */
export async function readCliSignin(db: Db, requestId: string) {
  const [row] = await db
    .select()
    .from(cliSignins)
    .where(and(eq(cliSignins.id, requestId), gt(cliSignins.expiresAt, new Date())))
    .limit(1);
  if (!row) throw notFound(NO_SIGNIN);
  return {
    id: row.id,
    client_id: row.clientId,
    redirect_uri: row.redirectUri,
    loopback_address: loopbackAddress(row.redirectUri),
    status: row.status as (typeof CLI_SIGNIN_STATUSES)[number],
    created_at: row.createdAt.toISOString(),
    expires_at: row.expiresAt.toISOString(),
    source_ip: row.sourceIp,
    user_agent: row.userAgent,
  };
}

type SigninRow = typeof cliSignins.$inferSelect;

/**
 * Moves a pending, unexpired sign-in to `decision` (with `changes`) and writes its audit record, in one transaction.
 * A sign-in already decided is 409 (its code says how it was decided); an unknown or expired one is 404.
 */
async function decideCliSignin(
  db: Db,
  requestId: string,
  decision: 'approved' | 'refused',
  person: Principal,
  sourceIp: string,
  changes: Partial<typeof cliSignins.$inferInsert> = {},
): Promise<SigninRow> {
  const now = new Date();
  return db.transaction(async (tx) => {
    const [row] = await tx
      .update(cliSignins)
      .set({ ...changes, status: decision, userSubject: person.subject, userEmail: person.email })
      .where(
        and(eq(cliSignins.id, requestId), eq(cliSignins.status, 'pending'), gt(cliSignins.expiresAt, now)),
      )
      .returning();
    if (!row) {
      const [existing] = await tx.select().from(cliSignins).where(eq(cliSignins.id, requestId)).limit(1);
      if (existing && existing.expiresAt > now) {
        if (existing.status === 'refused') {
          throw conflict(
            'signin_already_refused',
            decision === 'approved'
              ? "This sign-in request was refused, so it cannot be approved; run the agent's login again to ask anew."
              : 'This sign-in request was already refused.',
          );
        }
        throw conflict(
          'signin_already_approved',
          decision === 'approved'
            ? 'This sign-in request was already approved.'
            : 'This sign-in request was already approved, so it can no longer be refused; the agent has its code.',
        );
      }
      throw notFound(NO_SIGNIN);
    }
    await recordAudit(tx, {
      actionType: `cli_signin.${decision}`,
      actor: { id: person.subject, email: person.email, ipAddress: sourceIp },
      resourceType: 'cli_signin',
      resourceId: row.id,
      metadata: { client_id: row.clientId, loopback_address: loopbackAddress(row.redirectUri) },
    });
    return row;
  });
}

/** The dashboard, with the signed-in person's token, approves a pending sign-in and gets the redirect back. */
export async function approveCliSignin(db: Db, requestId: string, person: Principal, sourceIp: string) {
  const code = randomBytes(32).toString('base64url');
  const row = await decideCliSignin(db, requestId, 'approved', person, sourceIp, {
    codeHash: codeHash(code),
    codeExpiresAt: new Date(Date.now() + CODE_TTL_MS),
  });
  const redirect = new URL(row.redirectUri);
  redirect.searchParams.set('code', code);
  redirect.searchParams.set('state', row.state);
  return { redirect_to: redirect.toString() };
}

/**
 * The person refuses a pending sign-in: it can no longer be approved, and the browser goes back to the agent with
 * error=access_denied (RFC 6749 section 4.1.2.1), so that the agent stops waiting at once.
 */
export async function refuseCliSignin(db: Db, requestId: string, person: Principal, sourceIp: string) {
  const row = await decideCliSignin(db, requestId, 'refused', person, sourceIp);
  const redirect = new URL(row.redirectUri);
  redirect.searchParams.set('error', 'access_denied');
  redirect.searchParams.set('state', row.state);
  return { redirect_to: redirect.toString() };
}

const invalidGrant = (message: string) => invalid('invalid_grant', message);

/**
 * Exchanges a one-time code (60 s) and its PKCE verifier for a token that only enrolls devices. Failed exchanges
 * (invalid_grant) are counted per source address (scope cli_source, shared/identity/lockouts.ts): past the
 * threshold the address gets 429 too_many_attempts with Retry-After, before any code is looked at.
 */
export async function exchangeCliCode(
  config: Config,
  db: Db,
  input: { code: string; code_verifier: string; redirect_uri: string },
  sourceIp: string,
) {
  const keys = cliExchangeKeys(sourceIp);
  refuseWhileLocked(await readKeyStates(db, keys));
  try {
    return await redeemCliCode(config, db, input);
  } catch (err) {
    if (err instanceof ServiceError && err.code === 'invalid_grant') {
      await recordSigninFailure(db, signinPolicy(config), keys, sourceIp);
    }
    throw err;
  }
}

async function redeemCliCode(
  config: Config,
  db: Db,
  input: { code: string; code_verifier: string; redirect_uri: string },
) {
  // Consume the code first (atomically, once), then check what it was bound to: a failed check still burns it.
  const [row] = await db
    .update(cliSignins)
    .set({ status: 'used' })
    .where(
      and(
        eq(cliSignins.codeHash, codeHash(input.code)),
        eq(cliSignins.status, 'approved'),
        gt(cliSignins.codeExpiresAt, sql`now()`),
      ),
    )
    .returning();
  if (!row) throw invalidGrant('The code is unknown, expired (60 s) or already used; sign in again.');
  if (row.redirectUri !== input.redirect_uri)
    throw invalidGrant('redirect_uri does not match the authorize request.');
  const challenge = sha256(input.code_verifier).toString('base64url');
  const expected = Buffer.from(row.codeChallenge);
  const actual = Buffer.from(challenge);
  if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) {
    throw invalidGrant('code_verifier does not match the code_challenge (PKCE S256).');
  }
  return issueLocalToken(config, {
    subject: row.userSubject as string,
    email: row.userEmail ?? '',
    name: '',
    roles: ['user'],
    tokenUse: 'cli',
  });
}
