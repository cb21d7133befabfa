import type { Config } from '../config/schema.ts';
import { signHs256, verifyHs256 } from './hs256.ts';
import { type Principal, ROLES, type Role } from './principal.ts';

export interface IssuedToken {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
}

/** HS256 JWT with sub, email, name, roles, token_use, iat, exp, iss, aud (device-protocol.md, "Local sign-in"). */
export async function issueLocalToken(
  config: Config,
  principal: Omit<Principal, 'tokenUse'> & { tokenUse?: Principal['tokenUse'] },
  ttlSeconds = Math.floor(config.auth.token_ttl / 1000),
): Promise<IssuedToken> {
  const issuedAt = Math.floor(Date.now() / 1000);
  const token = signHs256(
    {
      email: principal.email,
      name: principal.name,
      roles: principal.roles,
      token_use: principal.tokenUse ?? 'session',
      sub: principal.subject,
      iss: config.auth.jwt_issuer,
      aud: config.auth.jwt_audience,
      iat: issuedAt,
      exp: issuedAt + ttlSeconds,
    },
    config.auth.jwt_secret,
  );
  return { access_token: token, token_type: 'Bearer', expires_in: ttlSeconds };
}

export function rolesFrom(value: unknown): Role[] {
  const list = Array.isArray(value) ? value : typeof value === 'string' ? value.split(/[\s,]+/) : [];
  return list.filter((r): r is Role => (ROLES as readonly string[]).includes(r as string));
}

/** Verifies a local token; only HS256 is accepted (so `alg: none` and algorithm confusion are refused). */
export async function verifyLocalToken(config: Config, token: string): Promise<Principal> {
  const payload = verifyHs256(token, config.auth.jwt_secret, {
    issuer: config.auth.jwt_issuer,
    audience: config.auth.jwt_audience,
  });
  return {
    subject: payload.sub as string,
    email: typeof payload.email === 'string' ? payload.email : '',
    name: typeof payload.name === 'string' ? payload.name : '',
    roles: rolesFrom(payload.roles),
    tokenUse: payload.token_use === 'cli' ? 'cli' : 'session',
  };
}
