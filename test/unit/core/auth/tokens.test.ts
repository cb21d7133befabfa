import assert from 'node:assert/strict';
import { test } from 'node:test';
import { exportJWK, generateKeyPair, SignJWT, UnsecuredJWT } from 'jose';
import { authenticate, BYPASS_PRINCIPAL, servicePrincipal } from '#shared/core/auth/authenticate.ts';
import { idpVerifier } from '#shared/core/auth/idp-tokens.ts';
import { issueLocalToken } from '#shared/core/auth/local-tokens.ts';
import { ServiceError } from '#shared/core/errors.ts';
import { STATUS_OF_KIND } from '#shared/core/http/middleware/error-response.ts';
import { hashPassword, verifyPassword } from '#shared/identity/passwords.ts';
import { installOfflineIdp } from '#test/support/offline-idp.ts';
import { randomSecret } from '#test/support/secrets.ts';
import { testConfig } from '#test/support/service.ts';

const config = testConfig();
const secret = new TextEncoder().encode(config.auth.jwt_secret);
const person = { subject: 'u-1', email: 'u@example.test', name: 'U', roles: ['admin' as const] };
const headers = (token: string) => ({ authorization: `Bearer ${token}` });
/** The person a token states (who may do what is the users table's: shared/core/auth/caller.ts). */
const principalOf = async (c: typeof config, h: Record<string, string>) =>
  (await authenticate(c, h)).principal;

async function rejectsWith(promise: Promise<unknown>, status: number, code: string) {
  await assert.rejects(
    promise,
    (err: unknown) => err instanceof ServiceError && STATUS_OF_KIND[err.kind] === status && err.code === code,
  );
}

test('a local token round-trips with its claims', async () => {
  const { access_token, expires_in } = await issueLocalToken(config, person);
  assert.equal(expires_in, 3600);
  const p = await principalOf(config, headers(access_token));
  assert.deepEqual(p, { ...person, tokenUse: 'session' });
});

test('alg none, other algorithms, wrong issuer or audience, expired and wrong secret are refused', async () => {
  const unsecured = new UnsecuredJWT({ roles: ['admin'] })
    .setSubject('x')
    .setIssuer(config.auth.jwt_issuer)
    .setAudience(config.auth.jwt_audience)
    .setIssuedAt()
    .setExpirationTime('1h')
    .encode();
  await rejectsWith(authenticate(config, headers(unsecured)), 401, 'invalid_token');
  const sign = (alg: string, mutate: (j: SignJWT) => SignJWT = (j) => j, key: Uint8Array = secret) =>
    mutate(
      new SignJWT({ roles: ['admin'] })
        .setProtectedHeader({ alg })
        .setSubject('x')
        .setIssuer(config.auth.jwt_issuer)
        .setAudience(config.auth.jwt_audience)
        .setIssuedAt()
        .setExpirationTime('1h'),
    ).sign(key);
  await rejectsWith(authenticate(config, headers(await sign('HS512'))), 401, 'invalid_token');
  await rejectsWith(
    authenticate(config, headers(await sign('HS256', (j) => j.setIssuer('other')))),
    401,
    'invalid_token',
  );
  await rejectsWith(
    authenticate(config, headers(await sign('HS256', (j) => j.setAudience('other')))),
    401,
    'invalid_token',
  );
  const past = Math.floor(Date.now() / 1000) - 7200;
  await rejectsWith(
    authenticate(
      config,
      headers(await sign('HS256', (j) => j.setIssuedAt(past).setExpirationTime(past + 60))),
    ),
    401,
    'token_expired',
  );
  await rejectsWith(
    authenticate(config, headers(await sign('HS256', (j) => j, new TextEncoder().encode(randomSecret())))),
    401,
    'invalid_token',
  );
  await rejectsWith(authenticate(config, {}), 401, 'unauthorized');
  await rejectsWith(authenticate(config, { authorization: 'Basic dXNlcjpwYXNz' }), 401, 'unauthorized');
});

test('a local token has a bounded lifetime: exp no further past iat than auth.token_ttl, iat not ahead past the skew', async () => {
  const now = Math.floor(Date.now() / 1000);
  const ttl = config.auth.token_ttl / 1000;
  const skew = config.auth.token_clock_skew / 1000;
  const signed = (claims: { iat?: number; exp?: number }) => {
    const jwt = new SignJWT({ roles: ['admin'], ...claims })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('ghost')
      .setIssuer(config.auth.jwt_issuer)
      .setAudience(config.auth.jwt_audience);
    return jwt.sign(secret);
  };
  // The year 300000, and one second past the lifetime.
  await rejectsWith(
    authenticate(config, headers(await signed({ iat: now, exp: 9_405_000_000_000 }))),
    401,
    'invalid_token',
  );
  await rejectsWith(
    authenticate(config, headers(await signed({ iat: now, exp: now + ttl + 1 }))),
    401,
    'invalid_token',
  );
  // Issued ahead of this clock: within the skew it is taken, beyond it refused.
  const ahead = now + skew - 5;
  assert.equal(
    (await principalOf(config, headers(await signed({ iat: ahead, exp: ahead + 60 })))).subject,
    'ghost',
  );
  const future = now + skew + 60;
  await rejectsWith(
    authenticate(config, headers(await signed({ iat: future, exp: future + 60 }))),
    401,
    'invalid_token',
  );
  // Both claims are required.
  await rejectsWith(authenticate(config, headers(await signed({ exp: now + 60 }))), 401, 'invalid_token');
  await rejectsWith(authenticate(config, headers(await signed({ iat: now }))), 401, 'invalid_token');
  // Exactly the lifetime is taken; a lifetime that has run out is token_expired.
  assert.equal(
    (await principalOf(config, headers(await signed({ iat: now, exp: now + ttl })))).subject,
    'ghost',
  );
  await rejectsWith(
    authenticate(config, headers(await signed({ iat: now - ttl, exp: now - 1 }))),
    401,
    'token_expired',
  );
});

test('local tokens are HS256 only: an RS256 token and a token cut short are refused', async () => {
  const { privateKey } = await generateKeyPair('RS256');
  const claims = () =>
    new SignJWT({ roles: ['admin'] })
      .setSubject('x')
      .setIssuer(config.auth.jwt_issuer)
      .setAudience(config.auth.jwt_audience)
      .setIssuedAt()
      .setExpirationTime('10m');
  const rs = await claims().setProtectedHeader({ alg: 'RS256' }).sign(privateKey);
  await rejectsWith(authenticate(config, headers(rs)), 401, 'invalid_token');
  const good = await claims().setProtectedHeader({ alg: 'HS256' }).sign(secret);
  assert.equal((await principalOf(config, headers(good))).subject, 'x');
  for (const broken of [good.slice(0, -2), `${good}A`, good.split('.').slice(0, 2).join('.')]) {
    await rejectsWith(authenticate(config, headers(broken)), 401, 'invalid_token');
  }
});

test('idp mode verifies RS256 tokens from the issuer JWKS with aws-jwt-verify; roles from the configured claim', async () => {
  const idp = testConfig({
    auth: {
      provider: 'idp',
      jwt_secret: randomSecret(),
      idp_domain: 'tenant.example.com',
      idp_audience: 'api://acp',
      idp_roles_claim: 'https://acp.example.com/roles',
    },
  });
  const offline = await installOfflineIdp(idp);
  const token = (claims: Record<string, unknown>, audience?: string, key?: Parameters<SignJWT['sign']>[0]) =>
    offline.sign(claims, 'idp|42', { audience, key });
  const p = await principalOf(
    idp,
    headers(await token({ email: 'e@x.test', 'https://acp.example.com/roles': ['admin', 'other'] })),
  );
  assert.equal(p.subject, 'idp|42');
  assert.deepEqual(p.roles, ['admin']);
  await rejectsWith(authenticate(idp, headers(await token({}, 'api://other'))), 401, 'invalid_token');
  const other = await generateKeyPair('RS256');
  await rejectsWith(
    authenticate(idp, headers(await token({}, 'api://acp', other.privateKey))),
    401,
    'invalid_token',
  );
});

test('idp_bypass: no token is the local developer; a token is read without verification', async () => {
  const bypass = testConfig({ auth: { provider: 'idp', idp_bypass: true, jwt_secret: '' } });
  assert.deepEqual(await principalOf(bypass, {}), BYPASS_PRINCIPAL);
  const unsigned = new UnsecuredJWT({ email: 'dev2@x.test', roles: ['user'] }).setSubject('dev2').encode();
  const p = await principalOf(bypass, headers(unsigned));
  assert.equal(p.subject, 'dev2');
  assert.deepEqual(p.roles, ['user']);
});

test('a service token: exactly the configured one, never when none is configured, never as a session', () => {
  const token = randomSecret();
  const configured = testConfig({ audit: { ingest_token: token } });
  const bearer = (t: string) => ({ authorization: `Bearer ${t}` });
  const principal = servicePrincipal(configured, 'audit.ingest_token', bearer(token));
  assert.equal(principal?.tokenUse, 'service');
  assert.deepEqual(principal?.roles, []);
  assert.equal(principal?.email, 'service-token:audit.ingest_token');
  for (const other of [`${token}x`, token.slice(1), token.toUpperCase(), '']) {
    assert.equal(servicePrincipal(configured, 'audit.ingest_token', bearer(other)), undefined, other);
  }
  assert.equal(servicePrincipal(configured, 'audit.ingest_token', {}), undefined);
  // Not configured: no bearer matches, the empty one included.
  const none = testConfig();
  assert.equal(none.audit.ingest_token, '');
  assert.equal(servicePrincipal(none, 'audit.ingest_token', bearer('')), undefined);
  assert.equal(servicePrincipal(none, 'audit.ingest_token', { authorization: 'Bearer ' }), undefined);
});

test('passwords: scrypt hashes verify, differ per salt, and reject wrong input', async () => {
  const a = await hashPassword('correct horse');
  const b = await hashPassword('correct horse');
  assert.notEqual(a, b);
  assert.match(a, /^scrypt\$32768\$8\$1\$/);
  assert.equal(await verifyPassword('correct horse', a), true);
  assert.equal(await verifyPassword('correct horsE', a), false);
  assert.equal(await verifyPassword('x', null), false);
  assert.equal(await verifyPassword('x', 'plain'), false);
});

test("the IdP's verifier takes its issuer with and without the trailing slash (Auth0 / Cognito), one JWKS", async () => {
  const cognito = testConfig({
    auth: {
      provider: 'idp',
      idp_domain: 'cognito-idp.eu-west-1.amazonaws.com/eu-west-1_Pool',
      idp_audience: 'console-client',
      jwt_secret: '',
    },
  });
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  const jwks = { keys: [{ ...(await exportJWK(publicKey)), kid: 'c1', alg: 'RS256', use: 'sig' }] };
  // The verifier the service creates itself (not one a test installed), its JWKS cached for each issuer it takes.
  const verifier = idpVerifier(cognito) as unknown as { cacheJwks(jwks: unknown, issuer: string): void };
  const base = 'https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_Pool';
  for (const issuer of [base, `${base}/`]) verifier.cacheJwks(jwks, issuer);
  const token = (issuer: string) =>
    new SignJWT({ email: 'c@x.test', roles: ['admin'] })
      .setProtectedHeader({ alg: 'RS256', kid: 'c1' })
      .setSubject('cognito-user')
      .setIssuer(issuer)
      .setAudience('console-client')
      .setIssuedAt()
      .setExpirationTime('10m')
      .sign(privateKey);
  for (const issuer of [base, `${base}/`]) {
    const p = await principalOf(cognito, headers(await token(issuer)));
    assert.equal(p.subject, 'cognito-user', issuer);
  }
  await rejectsWith(authenticate(cognito, headers(await token(`${base}-other`))), 401, 'invalid_token');
});
