// The local tokens' JWS: HS256 compact serialization (RFC 7515) with the JWT claim checks of RFC 7519, on node:crypto.
// The service signs and verifies one algorithm with one key, which is all a general JOSE library is needed for here;
// written out it is ~50 lines instead of 13.7 KB in every Lambda bundle (jose's key import, claim and JWS modules):
// the margin that keeps requests/query, the largest function, under the 450 KB bundle goal (README, Bundles).
// test/unit/auth/hs256.test.ts checks it against jose as the independent implementation: tokens jose signs verify
// here, tokens signed here verify in jose, and every way jose refuses a token is refused here too.
import { createHmac, timingSafeEqual } from 'node:crypto';

export type Claims = Record<string, unknown>;

/** Why a token was refused: `expired` (its exp has passed) or `invalid` (anything else). */
export class TokenRejected extends Error {
  readonly reason: 'invalid' | 'expired';
  constructor(message: string, reason: 'invalid' | 'expired') {
    super(message);
    this.name = 'TokenRejected';
    this.reason = reason;
  }
}

export interface VerifyOptions {
  issuer: string;
  audience: string;
}

const HEADER = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');
const BASE64URL = /^[A-Za-z0-9_-]+$/;

const mac = (secret: string, signingInput: string) =>
  createHmac('sha256', secret).update(signingInput).digest('base64url');

export function signHs256(claims: Claims, secret: string): string {
  const signingInput = `${HEADER}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
  return `${signingInput}.${mac(secret, signingInput)}`;
}

function jsonObject(part: string, what: string): Claims {
  if (!BASE64URL.test(part)) throw new TokenRejected(`The ${what} is not base64url.`, 'invalid');
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  } catch {
    throw new TokenRejected(`The ${what} is not JSON.`, 'invalid');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new TokenRejected(`The ${what} is not a JSON object.`, 'invalid');
  return value as Claims;
}

/**
 * The claims of a token this service signed with `secret`, or TokenRejected. Refused: any alg but HS256 (so `none`
 * and algorithm confusion), a `crit` header, a signature that does not match, another issuer or audience, a missing
 * or non-numeric sub/iat/exp, an exp that has passed and an nbf still ahead.
 */
export function verifyHs256(token: string, secret: string, options: VerifyOptions): Claims {
  const parts = token.split('.');
  if (parts.length !== 3) throw new TokenRejected('A JWS has three parts.', 'invalid');
  const [header, payload, signature] = parts as [string, string, string];
  const protectedHeader = jsonObject(header, 'header');
  if (protectedHeader.alg !== 'HS256') throw new TokenRejected('Only HS256 is accepted.', 'invalid');
  if ('crit' in protectedHeader) throw new TokenRejected('No critical header is understood.', 'invalid');
  const expected = Buffer.from(mac(secret, `${header}.${payload}`));
  const given = Buffer.from(signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    throw new TokenRejected('The signature does not match.', 'invalid');
  const claims = jsonObject(payload, 'payload');
  const now = Math.floor(Date.now() / 1000);
  if (claims.iss !== options.issuer) throw new TokenRejected('Another issuer.', 'invalid');
  const audiences = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
  if (!audiences.includes(options.audience)) throw new TokenRejected('Another audience.', 'invalid');
  if (typeof claims.sub !== 'string') throw new TokenRejected('sub is missing.', 'invalid');
  if (typeof claims.iat !== 'number') throw new TokenRejected('iat is missing.', 'invalid');
  if (typeof claims.exp !== 'number') throw new TokenRejected('exp is missing.', 'invalid');
  if (claims.nbf !== undefined && (typeof claims.nbf !== 'number' || claims.nbf > now))
    throw new TokenRejected('The token is not valid yet.', 'invalid');
  if (claims.exp <= now) throw new TokenRejected('The token has expired.', 'expired');
  return claims;
}
