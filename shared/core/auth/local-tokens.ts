// The service's own tokens (local sign-in and the CLI sign-in): HS256 JWTs signed and verified with jose, the
// algorithm pinned. Each carries a bounded lifetime: verification refuses a token whose exp lies further past its iat
// than auth.token_ttl, or whose iat lies ahead of this clock by more than auth.token_clock_skew, so that a token made
// with a leaked secret cannot live for years, and one signed by a clock far ahead is not quietly accepted.
import { errors, jwtVerify, SignJWT } from 'jose';
import type { Config } from '../config/schema.ts';
import { type Principal, ROLES, type Role } from './principal.ts';

export interface IssuedToken {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
}

/** Why a local token was refused: `expired` (its exp has passed) or `invalid` (anything else). */
export class TokenRejected extends Error {
  override name = 'TokenRejected';
  readonly reason: 'invalid' | 'expired';
  constructor(message: string, reason: 'invalid' | 'expired') {
    super(message);
    this.reason = reason;
  }
}

const encoder = new TextEncoder();

/** The signing key, refused when it is not there: an empty HMAC key would sign for anyone. */
function signingKey(config: Pick<Config, 'auth'>): Uint8Array {
  const key = encoder.encode(config.auth.jwt_secret);
  if (key.length < 32)
    throw new Error('auth.jwt_secret is not set (at least 32 bytes): no local token is signed');
  return key;
}

/** HS256 JWT with sub, email, name, roles, token_use, iat, exp, iss, aud (device-protocol.md, "Local sign-in"). */
export async function issueLocalToken(
  config: Pick<Config, 'auth'>,
  principal: Omit<Principal, 'tokenUse'> & { tokenUse?: Principal['tokenUse'] },
  ttlSeconds = Math.floor(config.auth.token_ttl / 1000),
): Promise<IssuedToken> {
  const issuedAt = Math.floor(Date.now() / 1000);
  const token = await new SignJWT({
    email: principal.email,
    name: principal.name,
    roles: principal.roles,
    token_use: principal.tokenUse ?? 'session',
  })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(principal.subject)
    .setIssuer(config.auth.jwt_issuer)
    .setAudience(config.auth.jwt_audience)
    .setIssuedAt(issuedAt)
    .setExpirationTime(issuedAt + ttlSeconds)
    .sign(signingKey(config));
  return { access_token: token, token_type: 'Bearer', expires_in: ttlSeconds };
}

export function rolesFrom(value: unknown): Role[] {
  const list = Array.isArray(value) ? value : typeof value === 'string' ? value.split(/[\s,]+/) : [];
  return list.filter((r): r is Role => (ROLES as readonly string[]).includes(r as string));
}

/**
 * The claims of a local token, or TokenRejected. Refused: any alg but HS256 (so `none` and algorithm confusion), a
 * signature that does not match, another issuer or audience, a missing sub, iat or exp, an exp that has passed, an
 * nbf still ahead, an iat ahead of this clock by more than auth.token_clock_skew, and a lifetime (exp - iat) longer
 * than auth.token_ttl.
 */
export async function verifyLocalClaims(
  config: Pick<Config, 'auth'>,
  token: string,
): Promise<Record<string, unknown>> {
  let payload: Record<string, unknown>;
  try {
    ({ payload } = await jwtVerify(token, signingKey(config), {
      algorithms: ['HS256'],
      issuer: config.auth.jwt_issuer,
      audience: config.auth.jwt_audience,
      requiredClaims: ['sub', 'iat', 'exp'],
    }));
  } catch (err) {
    if (err instanceof errors.JWTExpired) throw new TokenRejected('The token has expired.', 'expired');
    throw new TokenRejected(`The token is not valid: ${(err as Error).message}`, 'invalid');
  }
  const iat = payload.iat as number;
  const exp = payload.exp as number;
  const now = Date.now() / 1000;
  if (iat > now + config.auth.token_clock_skew / 1000)
    throw new TokenRejected('The token was issued in the future.', 'invalid');
  if (exp - iat > config.auth.token_ttl / 1000)
    throw new TokenRejected('The token lives longer than auth.token_ttl.', 'invalid');
  return payload;
}

/** Verifies a local token (verifyLocalClaims): the person it names, as the token states them. */
export async function verifyLocalToken(config: Pick<Config, 'auth'>, token: string): Promise<Principal> {
  const payload = await verifyLocalClaims(config, token);
  return {
    subject: payload.sub as string,
    email: typeof payload.email === 'string' ? payload.email : '',
    name: typeof payload.name === 'string' ? payload.name : '',
    roles: rolesFrom(payload.roles),
    tokenUse: payload.token_use === 'cli' ? 'cli' : 'session',
  };
}
