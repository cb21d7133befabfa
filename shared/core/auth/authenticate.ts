import { createHash, timingSafeEqual } from 'node:crypto';
import type { Config } from '../config/schema.ts';
import { unauthenticated } from '../errors.ts';
/** Config keys holding a service's bearer token (RouteSpec.serviceToken: the routes that take it). */
export type ServiceTokenKey = 'audit.ingest_token';

import { verifyIdpToken } from './idp-tokens.ts';
import { rolesFrom, TokenRejected, verifyLocalToken } from './local-tokens.ts';
import type { Principal } from './principal.ts';

export const BYPASS_PRINCIPAL: Principal = {
  subject: 'dev-bypass',
  email: 'dev@localhost',
  name: 'Local developer (idp_bypass)',
  roles: ['admin', 'user'],
  tokenUse: 'session',
};

export function bearerToken(headers: Record<string, string | undefined>): string | undefined {
  const value = headers.authorization ?? headers.Authorization;
  if (!value) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(value);
  return match?.[1];
}

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/**
 * The service a route's service token stands for, when the request carries exactly that token (compared in constant
 * time); undefined otherwise, and always when the token is not configured. Its email names the credential, so records
 * it writes say which token sent them.
 */
export function servicePrincipal(
  config: Config,
  key: ServiceTokenKey,
  headers: Record<string, string | undefined>,
): Principal | undefined {
  const configured: Record<ServiceTokenKey, string> = { 'audit.ingest_token': config.audit.ingest_token };
  const expected = configured[key];
  const token = bearerToken(headers);
  if (!expected || !token || !timingSafeEqual(digest(token), digest(expected))) return undefined;
  return {
    subject: `service:${key}`,
    email: `service-token:${key}`,
    name: 'log shipper (service token)',
    roles: [],
    tokenUse: 'service',
  };
}

function unverifiedClaims(token: string): Record<string, unknown> | undefined {
  try {
    const part = token.split('.')[1];
    return part
      ? (JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A verified bearer token: the person as the token states them, and which kind of token it was: `local` (signed by
 * this service: a sign-in or a CLI sign-in), `idp` (the identity provider's) or `bypass` (auth.idp_bypass, claims
 * unverified). What the person may do is then read from the database (shared/core/auth/caller.ts).
 */
export interface AuthenticatedToken {
  principal: Principal;
  via: 'local' | 'idp' | 'bypass';
}

/**
 * Resolves the token of the Authorization header, or answers 401. Local tokens are tried first in every mode
 * (they are what the CLI sign-in issues); in idp mode an external token is then checked against the IdP.
 * With auth.idp_bypass (refused in prod by config validation) no IdP is called: a token's claims are taken as they
 * are, and a request without one is the local developer.
 */
export async function authenticate(
  config: Config,
  headers: Record<string, string | undefined>,
): Promise<AuthenticatedToken> {
  const token = bearerToken(headers);
  if (config.auth.provider === 'idp' && config.auth.idp_bypass) {
    if (!token) return { principal: BYPASS_PRINCIPAL, via: 'bypass' };
    const claims = unverifiedClaims(token);
    if (!claims || typeof claims.sub !== 'string')
      throw unauthenticated('The bearer token is not a JWT.', 'invalid_token');
    const principal: Principal = {
      subject: claims.sub,
      email: typeof claims.email === 'string' ? claims.email : '',
      name: typeof claims.name === 'string' ? claims.name : '',
      roles: rolesFrom(claims[config.auth.idp_roles_claim] ?? claims.roles),
      tokenUse: claims.token_use === 'cli' ? 'cli' : 'session',
    };
    return { principal, via: 'bypass' };
  }
  if (!token) throw unauthenticated();
  if (config.auth.jwt_secret.length >= 32) {
    try {
      return { principal: await verifyLocalToken(config, token), via: 'local' };
    } catch (err) {
      if (config.auth.provider === 'local') throw tokenError(err);
    }
  }
  try {
    return { principal: await verifyIdpToken(config, token), via: 'idp' };
  } catch (err) {
    throw tokenError(err);
  }
}

function tokenError(err: unknown) {
  // A local token says why (TokenRejected); aws-jwt-verify's JwtExpiredError says it in its message.
  const expired =
    err instanceof TokenRejected
      ? err.reason === 'expired'
      : /expired/i.test(`${(err as { code?: string }).code ?? ''} ${(err as Error).message ?? ''}`);
  if (expired) return unauthenticated('The token has expired; sign in again.', 'token_expired');
  return unauthenticated('The bearer token is not valid for this service.', 'invalid_token');
}
