import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { and, eq, gt, sql } from 'drizzle-orm';
import { issueLocalToken } from '../auth/local-tokens.ts';
import type { Principal } from '../auth/principal.ts';
import type { Config } from '../config/schema.ts';
import type { Db } from '../db/database.ts';
import { cliSignins } from '../db/schema.ts';
import { conflict, invalid, notFound, ServiceError } from '../errors.ts';
import { recordAudit } from './audit.ts';
import {
  cliExchangeKeys,
  readKeyStates,
  recordSigninFailure,
  refuseWhileLocked,
  signinPolicy,
} from './signin-lockouts.ts';

// Browser-brokered sign-in of the endpoint agent: OAuth 2.0 for native apps (RFC 8252) with PKCE S256 (RFC 7636).
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

export async function startCliSignin(
  config: Config,
  db: Db,
  input: { redirect_uri: string; state: string; code_challenge: string },
): Promise<string> {
  checkLoopbackRedirect(input.redirect_uri);
  const [row] = await db
    .insert(cliSignins)
    .values({
      redirectUri: input.redirect_uri,
      state: input.state,
      codeChallenge: input.code_challenge,
      expiresAt: new Date(Date.now() + SIGNIN_TTL_MS),
    })
    .returning({ id: cliSignins.id });
  const login = new URL('cli/login', `${(config.dashboard_url as string).replace(/\/+$/, '')}/`);
  login.searchParams.set('request', (row as { id: string }).id);
  return login.toString();
}

/** The dashboard, with the signed-in person's token, approves a pending sign-in and gets the redirect back. */
export async function approveCliSignin(db: Db, requestId: string, person: Principal, sourceIp: string) {
  const code = randomBytes(32).toString('base64url');
  const now = new Date();
  return db.transaction(async (tx) => {
    const [row] = await tx
      .update(cliSignins)
      .set({
        status: 'approved',
        userSubject: person.subject,
        userEmail: person.email,
        codeHash: codeHash(code),
        codeExpiresAt: new Date(now.getTime() + CODE_TTL_MS),
      })
      .where(
        and(eq(cliSignins.id, requestId), eq(cliSignins.status, 'pending'), gt(cliSignins.expiresAt, now)),
      )
      .returning();
    if (!row) {
      const [existing] = await tx.select().from(cliSignins).where(eq(cliSignins.id, requestId)).limit(1);
      if (existing && existing.status !== 'pending' && existing.expiresAt > now) {
        throw conflict('signin_already_approved', 'This sign-in request was already approved.');
      }
      throw notFound('No pending sign-in with this id (it may have expired after 10 minutes); start again.');
    }
    await recordAudit(tx, {
      actionType: 'cli_signin.approved',
      actor: { id: person.subject, email: person.email, ipAddress: sourceIp },
      resourceType: 'cli_signin',
      resourceId: row.id,
      metadata: { redirect_host: new URL(row.redirectUri).host },
    });
    const redirect = new URL(row.redirectUri);
    redirect.searchParams.set('code', code);
    redirect.searchParams.set('state', row.state);
    return { redirect_to: redirect.toString() };
  });
}

const invalidGrant = (message: string) => invalid('invalid_grant', message);

/**
 * Exchanges a one-time code (60 s) and its PKCE verifier for a token that only enrolls devices. Failed exchanges
 * (invalid_grant) are counted per source address (scope cli_source, shared/domain/signin-lockouts.ts): past the
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
