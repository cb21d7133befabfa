import assert from 'node:assert/strict';
import { before, beforeEach, describe, test } from 'node:test';
import { canonicalize } from '#shared/core/canonical-json.ts';
import {
  certificateCacheStats,
  clearCertificateCache,
  DeviceAuthError,
  type DeviceAuthErrorCode,
} from '#shared/devices/signing/certificate.ts';
import { InvalidTimestampError } from '#shared/devices/signing/freshness.ts';
import { verifySignedDeviceRequest } from '#shared/devices/signing/verify-request.ts';
import {
  type DeviceIdentity,
  makeDeviceIdentity,
  makeForeignSignedIdentity,
  signBytes,
  signPayload,
} from '#test/support/device-keys.ts';

const FIVE_MINUTES = 5 * 60 * 1000;
const DAY = 24 * 60 * 60 * 1000;

function refused(fn: () => unknown, code: DeviceAuthErrorCode, status = 401): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof DeviceAuthError, `expected DeviceAuthError, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    assert.equal(err.kind, status === 400 ? 'invalid' : 'unauthenticated');
    return true;
  });
}

/**
 * The canonical text of a body, written out by hand as an agent's own JCS would produce it: the test does not
 * rely on canonicalize() to know what a device signs.
 */
function registerBody(id: DeviceIdentity, clientTimestamp: string) {
  const body = {
    serialNumber: 'C02XYZ',
    brand: 'Apple',
    model: 'MacBook Pro',
    certificate: id.certificatePem,
    ownerEmail: 'ana@example.com',
    clientTimestamp,
  };
  const canonical =
    `{"brand":"Apple","certificate":${JSON.stringify(id.certificatePem)},"clientTimestamp":"${clientTimestamp}",` +
    '"model":"MacBook Pro","ownerEmail":"ana@example.com","serialNumber":"C02XYZ"}';
  return { body, canonical: Buffer.from(canonical, 'utf8') };
}

/** A request as register sends it, the signature in the body; checked at `now` with the five-minute window. */
const verifyInBody = (body: unknown, signature: string, now: Date) =>
  verifySignedDeviceRequest({ body, signature, signatureInBody: true, now, maxSkewMs: FIVE_MINUTES });

/**
 * A request as inventory and events send it, the signature in a header; without the raw body, the canonical form
 * decides. Checked at `now` with the five-minute window.
 */
const verifyInHeader = (body: unknown, signature: string, now: Date) =>
  verifySignedDeviceRequest({ body, signature, signatureInBody: false, now, maxSkewMs: FIVE_MINUTES });

beforeEach(() => clearCertificateCache());

for (const keyType of ['p256', 'ed25519'] as const) {
  describe(`signed requests with a ${keyType} device`, () => {
    let id: DeviceIdentity;
    let other: DeviceIdentity;
    const now = new Date('2026-06-01T12:00:00Z');
    const ts = '2026-06-01T11:59:30Z';

    before(async () => {
      const notBefore = new Date(now.getTime() - DAY);
      const notAfter = new Date(now.getTime() + 365 * DAY);
      [id, other] = await Promise.all([
        makeDeviceIdentity({ keyType, notBefore, notAfter }),
        makeDeviceIdentity({ keyType, notBefore, notAfter }),
      ]);
    });

    test('register: the signature travels in the body and is left out of the signed bytes', () => {
      const { body, canonical } = registerBody(id, ts);
      assert.equal(canonicalize(body), canonical.toString()); // the hand-written canonical text is right
      const signature = signPayload(id.privateKey, keyType, canonical);
      // As received: JSON text in another key order, with whitespace, parsed.
      const wire = JSON.parse(JSON.stringify({ signature, ...body }, null, 2));
      const out = verifyInBody(wire, signature, now);
      assert.deepEqual(out.canonical, canonical);
      assert.equal(out.via, 'canonical');
      assert.equal(out.certificate.fingerprint, id.fingerprint);
      assert.equal(out.certificate.keyType, keyType);
      assert.equal(out.clientTimestamp.toISOString(), '2026-06-01T11:59:30.000Z');
      assert.ok(out.signatureBytes.length > 0);
      assert.equal('signature' in wire, true, 'the caller’s body is not modified');
    });

    test('inventory/events: the signature travels in a header and the whole body is signed', () => {
      const body = {
        certificate: id.certificatePem,
        clientTimestamp: ts,
        agents: [{ agentType: 'claude-code', displayName: 'Claude Code', mcps: [] }],
      };
      const signature = signPayload(id.privateKey, keyType, Buffer.from(canonicalize(body)), 'url');
      const out = verifyInHeader(body, signature, now);
      assert.equal(out.canonical?.toString(), canonicalize(body));
      assert.equal(out.via, 'canonical');
    });

    test('fast path: the signature is checked over the body bytes as received, canonicalized only when that fails', () => {
      const body = {
        certificate: id.certificatePem,
        clientTimestamp: ts,
        events: [{ tool: 'search', n: 1.5, note: 'é\u2028' }],
      };
      // What a protocol-following agent sends: the very canonical bytes it signed, written out by hand here.
      const canonical =
        `{"certificate":${JSON.stringify(id.certificatePem)},"clientTimestamp":"${ts}",` +
        '"events":[{"n":1.5,"note":"é\u2028","tool":"search"}]}';
      assert.equal(canonicalize(body), canonical); // the hand-written canonical text is right
      const signature = signPayload(id.privateKey, keyType, Buffer.from(canonical, 'utf8'));
      const verify = (raw: string | Buffer | undefined, signatureInBody = false) =>
        verifySignedDeviceRequest({
          body: JSON.parse(raw === undefined ? canonical : raw.toString()),
          rawBody: raw,
          signature,
          signatureInBody,
          now,
          maxSkewMs: FIVE_MINUTES,
        });
      for (const raw of [canonical, Buffer.from(canonical, 'utf8')]) {
        const out = verify(raw);
        assert.equal(out.via, 'raw');
        assert.equal(out.canonical, undefined, 'not canonicalized');
      }
      // The same body sent pretty-printed: the bytes differ from what was signed, so the canonical form decides.
      const pretty = JSON.stringify(JSON.parse(canonical), null, 2);
      const slow = verify(pretty);
      assert.equal(slow.via, 'canonical');
      assert.equal(slow.canonical?.toString('utf8'), canonical);
      assert.deepEqual(slow.signatureBytes, verify(canonical).signatureBytes, 'one replay key either way');
      // Without the raw body (or with the signature in the body) only the canonical form is tried.
      assert.equal(verify(undefined).via, 'canonical');
      // Raw bytes that were not signed and a canonical form that was not either: refused.
      refused(() => verify(pretty.replace('search', 'delete')), 'invalid_signature');
      // A fresh timestamp is still required on the fast path.
      refused(
        () =>
          verifySignedDeviceRequest({
            body: JSON.parse(canonical),
            rawBody: canonical,
            signature,
            signatureInBody: false,
            now: new Date(now.getTime() + 10 * 60_000),
            maxSkewMs: FIVE_MINUTES,
          }),
        'stale_timestamp',
      );
    });

    test('fast path: raw bodies of any size and alphabet, one after another, each verify over their own bytes', () => {
      const sizes = [200_000, 10, 1_500_000, 3_000, 70_000];
      const signed = sizes.map((n, i) => {
        // Multi-byte text (é: 2 bytes, 😀: a surrogate pair, 4 bytes) so that the UTF-8 length differs from the
        // UTF-16 one; 1.5 million characters exceed the scratch buffer the verifier reuses.
        const note = `${i}é😀`.repeat(Math.ceil(n / 4)).slice(0, n);
        const text = `{"certificate":${JSON.stringify(id.certificatePem)},"clientTimestamp":"${ts}","note":"${note}"}`;
        return { text, signature: signPayload(id.privateKey, keyType, Buffer.from(text, 'utf8')) };
      });
      for (const { text, signature } of [...signed, ...signed.slice().reverse()]) {
        const out = verifySignedDeviceRequest({
          body: JSON.parse(text),
          rawBody: text,
          signature,
          signatureInBody: false,
          now,
          maxSkewMs: FIVE_MINUTES,
        });
        assert.equal(out.via, 'raw');
      }
      // The signature of the larger body that used the buffer before does not verify a smaller one after it.
      const [first, second] = signed as [(typeof signed)[0], (typeof signed)[0]];
      refused(
        () =>
          verifySignedDeviceRequest({
            body: JSON.parse(second.text),
            rawBody: second.text,
            signature: first.signature,
            signatureInBody: false,
            now,
            maxSkewMs: FIVE_MINUTES,
          }),
        'invalid_signature',
      );
    });

    test('fast path does not apply to register: the raw body carries the signature member', () => {
      const { body, canonical } = registerBody(id, ts);
      const signature = signPayload(id.privateKey, keyType, canonical);
      const raw = JSON.stringify({ ...body, signature });
      const out = verifySignedDeviceRequest({
        body: JSON.parse(raw),
        rawBody: raw,
        signature,
        signatureInBody: true,
        now,
        maxSkewMs: FIVE_MINUTES,
      });
      assert.equal(out.via, 'canonical');
      assert.deepEqual(out.canonical, canonical);
    });

    test('signatureInBody=false keeps a body member named signature in the signed bytes', () => {
      const body = { certificate: id.certificatePem, clientTimestamp: ts, signature: 'x' };
      const withoutIt = Buffer.from(canonicalize({ certificate: id.certificatePem, clientTimestamp: ts }));
      const signature = signPayload(id.privateKey, keyType, withoutIt);
      refused(() => verifyInHeader(body, signature, now), 'invalid_signature');
      verifyInBody(body, signature, now);
    });

    test('a body changed after signing is invalid_signature', () => {
      const { body, canonical } = registerBody(id, ts);
      const signature = signPayload(id.privateKey, keyType, canonical);
      for (const tampered of [
        { ...body, serialNumber: 'C02XYY' },
        { ...body, ownerEmail: 'mallory@example.com' },
        { ...body, extra: true },
        { ...body, model: undefined },
      ]) {
        refused(() => verifyInBody({ ...tampered, signature }, signature, now), 'invalid_signature');
      }
    });

    test('a signature by a key other than the certificate’s is invalid_signature', () => {
      const { body, canonical } = registerBody(id, ts);
      const signature = signPayload(other.privateKey, keyType, canonical);
      refused(() => verifyInBody(body, signature, now), 'invalid_signature');
    });

    test('a stale or future clientTimestamp with a valid signature is stale_timestamp', () => {
      for (const old of ['2026-06-01T11:54:59Z', '2026-06-01T12:05:01Z']) {
        const { body, canonical } = registerBody(id, old);
        const signature = signPayload(id.privateKey, keyType, canonical);
        refused(() => verifyInBody(body, signature, now), 'stale_timestamp');
      }
    });

    test('a stale request that is also tampered is invalid_signature (signature first)', () => {
      const { body, canonical } = registerBody(id, '2026-06-01T10:00:00Z');
      const signature = signPayload(id.privateKey, keyType, canonical);
      refused(() => verifyInBody({ ...body, brand: 'Dell' }, signature, now), 'invalid_signature');
    });

    test('signatureBytes: the decoded signature, the same for every base64 spelling', () => {
      const { body, canonical } = registerBody(id, ts);
      const raw = signBytes(id.privateKey, keyType, canonical);
      const seen = new Set<string>();
      for (const encoding of ['std', 'unpadded', 'url', 'url-padded'] as const) {
        const signature = signPayload(id.privateKey, keyType, canonical, encoding);
        // ECDSA is randomized: re-encode one fixed signature instead of signing anew.
        const fixed =
          encoding === 'std'
            ? raw.toString('base64')
            : encoding === 'unpadded'
              ? raw.toString('base64').replace(/=+$/, '')
              : encoding === 'url'
                ? raw.toString('base64url')
                : raw.toString('base64').replace(/\+/g, '-').replace(/\//g, '_');
        assert.ok(signature.length > 0);
        const out = verifyInBody(body, fixed, now);
        seen.add(out.signatureBytes.toString('hex'));
        if (keyType === 'ed25519') assert.deepEqual(out.signatureBytes, raw);
      }
      assert.equal(seen.size, 1);
    });

    test('the certificate is parsed once for repeated requests', () => {
      const { body, canonical } = registerBody(id, ts);
      for (let i = 0; i < 3; i++) {
        const signature = signPayload(id.privateKey, keyType, canonical);
        verifyInBody(body, signature, now);
      }
      assert.equal(certificateCacheStats().parses, 1);
    });
  });
}

describe('refusals that do not depend on the key type', () => {
  const now = new Date();
  const ts = () => new Date().toISOString();

  test('missing or bad clientTimestamp: InvalidTimestampError (a 400 validation problem)', async () => {
    const id = await makeDeviceIdentity({ keyType: 'ed25519' });
    for (const clientTimestamp of [undefined, '', 'yesterday', '2026-06-01T12:00:00', 1767323045]) {
      const body = { certificate: id.certificatePem, clientTimestamp };
      const signature = signPayload(id.privateKey, 'ed25519', Buffer.from(canonicalize(body)));
      assert.throws(() => verifyInHeader(body, signature, now), InvalidTimestampError);
    }
  });

  test('missing, expired, foreign-signed certificate: invalid_certificate; RSA: 400 unsupported_key', async () => {
    const expired = await makeDeviceIdentity({
      keyType: 'p256',
      notBefore: new Date(Date.now() - 10 * DAY),
      notAfter: new Date(Date.now() - DAY),
    });
    const foreign = await makeForeignSignedIdentity({ keyType: 'p256' });
    const rsa = await makeDeviceIdentity({ keyType: 'rsa' });
    const cases: [DeviceIdentity | undefined, DeviceAuthErrorCode, number][] = [
      [undefined, 'invalid_certificate', 401],
      [expired, 'invalid_certificate', 401],
      [foreign, 'invalid_certificate', 401],
      [rsa, 'unsupported_key', 400],
    ];
    for (const [id, code, status] of cases) {
      const body = { certificate: id?.certificatePem, clientTimestamp: ts() };
      const signature = id ? signPayload(id.privateKey, id.keyType, Buffer.from(canonicalize(body))) : 'AAAA';
      refused(() => verifyInHeader(body, signature, now), code, status);
    }
  });

  test('a body that is not an object, bad base64, or no canonical form: invalid_signature', async () => {
    const id = await makeDeviceIdentity({ keyType: 'p256' });
    for (const body of [null, [], 'text', 42]) {
      refused(() => verifyInHeader(body, 'AAAA', now), 'invalid_signature');
    }
    const body = { certificate: id.certificatePem, clientTimestamp: ts() };
    const good = signPayload(id.privateKey, 'p256', Buffer.from(canonicalize(body)));
    refused(() => verifyInHeader(body, `${good}!`, now), 'invalid_signature');
    // A lone surrogate (valid JSON text: "\udead") has no canonical form.
    const lone = JSON.parse(
      `{"certificate":${JSON.stringify(id.certificatePem)},"clientTimestamp":"${ts()}","name":"\\udead"}`,
    );
    refused(() => verifyInHeader(lone, good, now), 'invalid_signature');
  });
});
