// An identity provider without a network: an RS256 key made here, its JWKS cached in the service's own verifier
// (aws-jwt-verify's cacheJwks, installed for the config's issuer and audience), and tokens signed with it.
import { JwtVerifier } from 'aws-jwt-verify';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { idpIssuer, installIdpVerifier } from '#shared/core/auth/idp-tokens.ts';
import type { Config } from '#shared/core/config/schema.ts';

export interface OfflineIdp {
  /** A token of the provider for `subject` with `claims`; another audience or key to make one the service refuses. */
  sign(
    claims: Record<string, unknown>,
    subject: string,
    options?: { audience?: string; key?: Parameters<SignJWT['sign']>[0] },
  ): Promise<string>;
}

export async function installOfflineIdp(config: Config): Promise<OfflineIdp> {
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  const issuer = idpIssuer(config);
  const verifier = JwtVerifier.create({
    issuer,
    audience: config.auth.idp_audience,
    jwksUri: `${issuer}.well-known/jwks.json`,
  });
  verifier.cacheJwks({ keys: [jwk] } as never);
  installIdpVerifier(config, verifier as never);
  return {
    sign: (claims, subject, options = {}) =>
      new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
        .setSubject(subject)
        .setIssuer(issuer)
        .setAudience(options.audience ?? config.auth.idp_audience)
        .setIssuedAt()
        .setExpirationTime('10m')
        .sign(options.key ?? privateKey),
  };
}
