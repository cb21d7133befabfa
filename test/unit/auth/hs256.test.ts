// shared/auth/hs256.ts against jose, the independent implementation: what one signs the other verifies, and every
// token jose refuses for this service's checks is refused here, for the same reason (expired or invalid).
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { test } from 'node:test';
import { CompactSign, decodeProtectedHeader, jwtVerify, SignJWT, UnsecuredJWT } from 'jose';
import { type Claims, signHs256, TokenRejected, verifyHs256 } from '#shared/auth/hs256.ts';

const secret = 'a-test-secret-of-at-least-32-characters!';
const key = new TextEncoder().encode(secret);
const issuer = 'https://issuer.test';
const audience = 'acp-test';
const now = Math.floor(Date.now() / 1000);
const claims = (extra: Claims = {}): Claims => ({
  sub: 'u-1',
  iss: issuer,
  aud: audience,
  iat: now,
  exp: now + 600,
  roles: ['admin'],
  ...extra,
});

/** jose's verdict with the options verifyLocalToken used to give it. */
async function joseVerdict(token: string): Promise<'ok' | 'expired' | 'invalid'> {
  try {
    await jwtVerify(token, key, {
      algorithms: ['HS256'],
      issuer,
      audience,
      requiredClaims: ['sub', 'exp', 'iat'],
    });
    return 'ok';
  } catch (err) {
    return (err as { code?: string }).code === 'ERR_JWT_EXPIRED' ? 'expired' : 'invalid';
  }
}

function ourVerdict(token: string): 'ok' | 'expired' | 'invalid' {
  try {
    verifyHs256(token, secret, { issuer, audience });
    return 'ok';
  } catch (err) {
    assert.ok(err instanceof TokenRejected, `not a TokenRejected: ${String(err)}`);
    return err.reason;
  }
}

const joseSigned = (
  payload: Claims,
  header: Record<string, unknown> = { alg: 'HS256' },
  signKey: Parameters<SignJWT['sign']>[0] = key,
) => new SignJWT(payload).setProtectedHeader(header as { alg: string }).sign(signKey);

test('a token signed here verifies in jose with its claims and header', async () => {
  const token = signHs256(claims({ email: 'u@example.test' }), secret);
  const { payload } = await jwtVerify(token, key, { algorithms: ['HS256'], issuer, audience });
  assert.equal(payload.email, 'u@example.test');
  assert.deepEqual(payload.roles, ['admin']);
  assert.deepEqual(decodeProtectedHeader(token), { alg: 'HS256', typ: 'JWT' });
});

test('a token jose signs verifies here, with an audience list too', async () => {
  assert.equal(ourVerdict(await joseSigned(claims())), 'ok');
  assert.equal(ourVerdict(await joseSigned(claims({ aud: ['other', audience] }))), 'ok');
  assert.deepEqual(verifyHs256(await joseSigned(claims()), secret, { issuer, audience }).roles, ['admin']);
});

test('every token jose refuses is refused here, for the same reason', async () => {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const withoutClaim = (name: string) => {
    const c = claims();
    delete c[name];
    return c;
  };
  const cases: Array<[string, string | (() => Promise<string>)]> = [
    ['alg none', new UnsecuredJWT(claims()).encode()],
    ['HS512', () => joseSigned(claims(), { alg: 'HS512' })],
    ['RS256', () => joseSigned(claims(), { alg: 'RS256' }, privateKey)],
    ['another secret', () => joseSigned(claims(), undefined, new TextEncoder().encode('x'.repeat(40)))],
    ['another issuer', () => joseSigned(claims({ iss: 'https://other.test' }))],
    ['another audience', () => joseSigned(claims({ aud: 'other' }))],
    ['no sub', () => joseSigned(withoutClaim('sub'))],
    ['no iat', () => joseSigned(withoutClaim('iat'))],
    ['no exp', () => joseSigned(withoutClaim('exp'))],
    ['exp as a string', () => joseSigned(claims({ exp: String(now + 600) }))],
    ['expired', () => joseSigned(claims({ iat: now - 7200, exp: now - 3600 }))],
    ['exp is now', () => joseSigned(claims({ exp: now }))],
    ['not before ahead', () => joseSigned(claims({ nbf: now + 600 }))],
    ['a payload that is an array', () => signRaw('[1,2]')],
    ['two parts', 'eyJhbGciOiJIUzI1NiJ9.e30'],
    ['not base64url', 'eyJhbGciOiJIUzI1NiJ9.e30=.abc'],
    ['garbage', 'not-a-jwt'],
  ];
  for (const [name, pending] of cases) {
    const token = typeof pending === 'string' ? pending : await pending();
    const expected = await joseVerdict(token);
    assert.notEqual(expected, 'ok', `${name}: jose accepts it, so the case tests nothing`);
    assert.equal(ourVerdict(token), expected, name);
  }
  // Stricter than jose: no `crit` header at all (jose accepts RFC 7797's b64; this service never sends one).
  const critical = await signRaw(JSON.stringify(claims()), { alg: 'HS256', crit: ['b64'], b64: true });
  assert.equal(await joseVerdict(critical), 'ok');
  assert.equal(ourVerdict(critical), 'invalid');
  // A signature changed in its last character or cut short. The last of 43 characters carries 4 bits of the MAC and
  // 2 unused ones; the change flips its top bit (a MAC bit), so the bytes differ for any decoder: a change in the
  // unused bits only (B to A) decodes to the same MAC, which jose then accepts (about 1 run in 20 before).
  const good = signHs256(claims(), secret);
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const last = alphabet[alphabet.indexOf(good.at(-1) ?? 'A') ^ 32];
  for (const token of [`${good.slice(0, -1)}${last}`, good.slice(0, -2), `${good}A`]) {
    assert.equal(await joseVerdict(token), 'invalid');
    assert.equal(ourVerdict(token), 'invalid');
  }
});

/** A JWS over an arbitrary payload text, signed by jose . */
function signRaw(payload: string, header: Record<string, unknown> = { alg: 'HS256' }): Promise<string> {
  return new CompactSign(new TextEncoder().encode(payload))
    .setProtectedHeader(header as { alg: string })
    .sign(key);
}
