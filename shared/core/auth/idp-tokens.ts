import { JwtVerifier } from 'aws-jwt-verify';
import type { Config } from '../config/schema.ts';
import { rolesFrom } from './local-tokens.ts';
import type { Principal } from './principal.ts';

type Verifier = { verify(token: string): Promise<Record<string, unknown>> };
const verifiers = new Map<string, Verifier>();

export function idpIssuer(config: Config): string {
  const domain = config.auth.idp_domain.replace(/^https?:\/\//, '').replace(/\/+$/, '');
  return `https://${domain}/`;
}

/** One verifier per issuer+audience, created once per process so that its JWKS cache is reused. */
export function idpVerifier(config: Config): Verifier {
  const issuer = idpIssuer(config);
  const key = `${issuer}|${config.auth.idp_audience}`;
  let verifier = verifiers.get(key);
  if (!verifier) {
    // Tokens name their issuer as the IdP writes it: Auth0 and most with the trailing slash, Cognito
    // (https://cognito-idp.<region>.amazonaws.com/<pool>) without. Both are this IdP, with one JWKS.
    const jwksUri = `${issuer}.well-known/jwks.json`;
    const audience = config.auth.idp_audience;
    verifier = JwtVerifier.create([
      { issuer, audience, jwksUri },
      { issuer: issuer.slice(0, -1), audience, jwksUri },
    ]) as unknown as Verifier;
    verifiers.set(key, verifier);
  }
  return verifier;
}

/** Tests install a verifier whose JWKS was cached offline (`verifier.cacheJwks(jwks)`). */
export function installIdpVerifier(config: Config, verifier: Verifier): void {
  verifiers.set(`${idpIssuer(config)}|${config.auth.idp_audience}`, verifier);
}

export async function verifyIdpToken(config: Config, token: string): Promise<Principal> {
  const payload = await idpVerifier(config).verify(token);
  return {
    subject: String(payload.sub),
    email: typeof payload.email === 'string' ? payload.email : '',
    name: typeof payload.name === 'string' ? payload.name : '',
    roles: rolesFrom(payload[config.auth.idp_roles_claim]),
    tokenUse: 'session',
  };
}
