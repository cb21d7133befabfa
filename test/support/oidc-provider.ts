// A real OpenID provider for the tests: panva's oidc-provider (a certified implementation), served over HTTPS with a
// self-signed certificate made here, so that its issuer is the `https://<auth.idp_domain>/` the service verifies. Its
// own login and consent pages (devInteractions: any password) sign people in; each login name is an account of
// ACCOUNTS with its roles. This process trusts the certificate (tls.setDefaultCACertificates), so the service's
// verifier fetches the provider's JWKS over real TLS; a browser needs ignoreHTTPSErrors.
import 'reflect-metadata';
import { generateKeyPairSync, type webcrypto } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { getCACertificates, setDefaultCACertificates } from 'node:tls';
import * as x509 from '@peculiar/x509';
import Provider from 'oidc-provider';

x509.cryptoProvider.set(globalThis.crypto);

type CryptoKeyPair = webcrypto.CryptoKeyPair;

/** Login name → the roles claim the provider puts in its tokens. */
export const ACCOUNTS: Record<string, { name: string; roles: string[] }> = {
  'alice-admin': { name: 'Alice Admin', roles: ['admin'] },
  'bob-user': { name: 'Bob User', roles: ['user'] },
};

export interface TestOidcProvider {
  /** https://127.0.0.1:<port>/ */
  issuer: string;
  /** 127.0.0.1:<port>: auth.idp_domain. */
  domain: string;
  clientId: string;
  /** The certificate, PEM. */
  certificate: string;
  /** How long the access and ID tokens issued from now on last (an hour at first). */
  setTokenTtl(seconds: number): void;
  stop(): Promise<void>;
}

const pem = (label: string, der: ArrayBuffer) =>
  `-----BEGIN ${label}-----\n${Buffer.from(der)
    .toString('base64')
    .replace(/(.{64})/g, '$1\n')
    .replace(/\n?$/, '\n')}-----END ${label}-----\n`;

/** A self-signed certificate for 127.0.0.1 (ECDSA P-256), valid for a day. */
async function selfSignedCertificate(): Promise<{ cert: string; key: string }> {
  const algorithm = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const keys = (await crypto.subtle.generateKey(algorithm, true, ['sign', 'verify'])) as CryptoKeyPair;
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: Date.now().toString(16),
    name: 'CN=127.0.0.1',
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + 86_400_000),
    keys,
    signingAlgorithm: algorithm,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.SubjectAlternativeNameExtension([{ type: 'ip', value: '127.0.0.1' }]),
    ],
  });
  return {
    cert: certificate.toString('pem'),
    key: pem('PRIVATE KEY', await crypto.subtle.exportKey('pkcs8', keys.privateKey)),
  };
}

/**
 * Starts the provider with one public client (no secret, PKCE required): the console, whose redirect URI is
 * `${consoleUrl}/callback` and whose sign-out returns to `${consoleUrl}/`. Like Cognito, it gives a refresh token
 * with every code exchange (and a new one at each refresh, revoking the old).
 */
export async function startOidcProvider(options: {
  port: number;
  clientId: string;
  consoleUrl: string;
}): Promise<TestOidcProvider> {
  const { cert, key } = await selfSignedCertificate();
  setDefaultCACertificates([...getCACertificates('default'), cert]);
  const issuer = `https://127.0.0.1:${options.port}/`;
  const signingKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
  const redirectUri = `${options.consoleUrl}/callback`;
  let tokenTtl = 3600;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: options.clientId,
        client_name: 'Agent control plane console',
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        redirect_uris: [redirectUri],
        post_logout_redirect_uris: [`${options.consoleUrl}/`],
      },
    ],
    jwks: { keys: [{ ...signingKey, kid: 'test-signing-key', use: 'sig', alg: 'RS256' }] },
    cookies: { keys: [crypto.randomUUID()] },
    ttl: {
      AccessToken: () => tokenTtl,
      IdToken: () => tokenTtl,
      RefreshToken: 86_400,
      Interaction: 600,
      Session: 3600,
      Grant: 86_400,
    },
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: true,
    // The service reads the JWKS at `${issuer}.well-known/jwks.json` (shared/core/auth/idp-tokens.ts).
    routes: { jwks: '/.well-known/jwks.json' },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'], roles: ['roles'] },
    // Scope claims in the ID token too (the token the console sends when its audience is the client ID).
    conformIdTokenClaims: false,
    features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: true } },
    clientBasedCORS: (_ctx, origin, client) =>
      client.redirectUris?.some((uri) => new URL(uri).origin === origin) ?? false,
    findAccount: (_ctx, sub) => {
      const account = ACCOUNTS[sub];
      if (!account) return undefined;
      return {
        accountId: sub,
        claims: () => ({
          sub,
          email: `${sub}@idp.example.test`,
          email_verified: true,
          name: account.name,
          roles: account.roles,
        }),
      };
    },
  });
  const server: Server = createServer({ cert, key }, provider.callback());
  server.listen(options.port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const { port } = server.address() as AddressInfo;
  return {
    issuer,
    domain: `127.0.0.1:${port}`,
    clientId: options.clientId,
    certificate: cert,
    setTokenTtl: (seconds) => {
      tokenTtl = seconds;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
