import assert from 'node:assert/strict';
import { beforeEach, describe, test } from 'node:test';
import {
  certificateCacheStats,
  clearCertificateCache,
  DeviceAuthError,
  type DeviceAuthErrorCode,
  fingerprintOf,
  parseDeviceCertificate,
  setCertificateCacheCapacity,
} from '#shared/devices/signing/certificate.ts';
import {
  type DeviceIdentity,
  independentFingerprint,
  makeDeviceIdentity,
  makeForeignSignedIdentity,
} from '#test/support/device-keys.ts';

const DAY = 24 * 60 * 60 * 1000;
const now = () => new Date();

function rejects(fn: () => unknown, code: DeviceAuthErrorCode, status: number, message?: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof DeviceAuthError, `expected DeviceAuthError, got ${String(err)}`);
    assert.equal(err.code, code);
    assert.equal(err.kind, status === 400 ? 'invalid' : 'unauthenticated');
    if (message) assert.match(err.message, message);
    return true;
  });
}

/** The PEM re-wrapped: CRLF line ends, 76-character lines, text before and after the block. */
function rewrapped(pem: string): string {
  const body = pem.replace(/-----[A-Z ]+-----/g, '').replace(/\s+/g, '');
  const lines = body.match(/.{1,76}/g)!.join('\r\n');
  return `Subject: test device\r\n-----BEGIN CERTIFICATE-----\r\n${lines}\r\n-----END CERTIFICATE-----\r\ntrailing text`;
}

beforeEach(() => clearCertificateCache());

describe('DeviceAuthError', () => {
  test('status: 400 for unsupported_key, 401 for everything else', () => {
    assert.equal(new DeviceAuthError('unsupported_key', 'x').kind, 'invalid');
    for (const code of [
      'invalid_certificate',
      'invalid_signature',
      'stale_timestamp',
      'replayed_request',
      'unknown_device',
    ] as const) {
      const err = new DeviceAuthError(code, 'm');
      assert.equal(err.kind, 'unauthenticated');
      assert.equal(err.code, code);
      assert.equal(err.message, 'm');
      assert.ok(err instanceof Error);
    }
  });
});

for (const keyType of ['p256', 'ed25519'] as const) {
  describe(`a valid self-signed ${keyType} certificate`, () => {
    let id: DeviceIdentity;
    const notBefore = new Date(Math.floor(Date.now() / 1000) * 1000 - DAY);
    const notAfter = new Date(notBefore.getTime() + 30 * DAY);

    beforeEach(async () => {
      id ??= await makeDeviceIdentity({ keyType, notBefore, notAfter, subject: 'CN=laptop-42, O=Acme' });
    });

    test('parses, with the fields of the certificate', () => {
      const cert = parseDeviceCertificate(id.certificatePem, now());
      assert.equal(cert.keyType, keyType);
      assert.equal(cert.validFrom.getTime(), notBefore.getTime());
      assert.equal(cert.validTo.getTime(), notAfter.getTime());
      assert.match(cert.subject, /CN=laptop-42/);
      assert.match(cert.subject, /O=Acme/);
      assert.match(cert.serialNumber, /^[0-9A-F]+$/);
      assert.equal(cert.publicKey.type, 'public');
      assert.ok(
        cert.publicKey.equals(id.publicKey),
        'the key in the certificate is the key the identity signs with',
      );
    });

    test('fingerprint: 64 lowercase hex characters, SHA-256 over the DER, computed independently', () => {
      const cert = parseDeviceCertificate(id.certificatePem, now());
      assert.match(cert.fingerprint, /^[0-9a-f]{64}$/);
      assert.equal(cert.fingerprint, id.fingerprint);
      assert.equal(cert.fingerprint, independentFingerprint(id.certificatePem));
      assert.equal(fingerprintOf(id.certificatePem), id.fingerprint);
    });

    test('the fingerprint does not depend on PEM line wrapping or surrounding text', () => {
      const pem = rewrapped(id.certificatePem);
      assert.equal(fingerprintOf(pem), id.fingerprint);
      assert.equal(parseDeviceCertificate(pem, now()).fingerprint, id.fingerprint);
    });

    test('validity bounds are inclusive; one second outside is invalid_certificate', () => {
      parseDeviceCertificate(id.certificatePem, notBefore);
      parseDeviceCertificate(id.certificatePem, notAfter);
      rejects(
        () => parseDeviceCertificate(id.certificatePem, new Date(notBefore.getTime() - 1000)),
        'invalid_certificate',
        401,
        /not valid yet/,
      );
      rejects(
        () => parseDeviceCertificate(id.certificatePem, new Date(notAfter.getTime() + 1000)),
        'invalid_certificate',
        401,
        /expired/,
      );
    });
  });
}

describe('refused certificates', () => {
  test('expired', async () => {
    const id = await makeDeviceIdentity({
      keyType: 'p256',
      notBefore: new Date(Date.now() - 10 * DAY),
      notAfter: new Date(Date.now() - DAY),
    });
    rejects(() => parseDeviceCertificate(id.certificatePem, now()), 'invalid_certificate', 401, /expired/);
  });

  test('not yet valid', async () => {
    const id = await makeDeviceIdentity({
      keyType: 'ed25519',
      notBefore: new Date(Date.now() + DAY),
      notAfter: new Date(Date.now() + 10 * DAY),
    });
    rejects(
      () => parseDeviceCertificate(id.certificatePem, now()),
      'invalid_certificate',
      401,
      /not valid yet/,
    );
  });

  for (const keyType of ['p256', 'ed25519'] as const) {
    test(`${keyType}: issued by another key and name`, async () => {
      const id = await makeForeignSignedIdentity({ keyType, issuerName: 'other' });
      rejects(
        () => parseDeviceCertificate(id.certificatePem, now()),
        'invalid_certificate',
        401,
        /not self-signed/,
      );
    });

    test(`${keyType}: issuer name = subject but signed by another key`, async () => {
      const id = await makeForeignSignedIdentity({ keyType, issuerName: 'same' });
      rejects(
        () => parseDeviceCertificate(id.certificatePem, now()),
        'invalid_certificate',
        401,
        /does not verify with its own public key/,
      );
    });
  }

  test('RSA key: 400 unsupported_key', async () => {
    const id = await makeDeviceIdentity({ keyType: 'rsa' });
    rejects(() => parseDeviceCertificate(id.certificatePem, now()), 'unsupported_key', 400, /RSA/);
  });

  test('P-384 key: 400 unsupported_key', async () => {
    const id = await makeDeviceIdentity({ keyType: 'p384' });
    rejects(() => parseDeviceCertificate(id.certificatePem, now()), 'unsupported_key', 400, /secp384r1/);
  });

  test('not a certificate at all', () => {
    for (const pem of [
      '',
      'hello',
      '-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----',
      '-----BEGIN CERTIFICATE-----\nnot*base64\n-----END CERTIFICATE-----',
      '-----BEGIN CERTIFICATE-----\nQUJD\n-----END CERTIFICATE-----',
      `-----BEGIN CERTIFICATE-----\n${Buffer.alloc(300, 7).toString('base64')}\n-----END CERTIFICATE-----`,
    ]) {
      rejects(() => parseDeviceCertificate(pem, now()), 'invalid_certificate', 401);
    }
    rejects(
      () => Reflect.apply(parseDeviceCertificate, undefined, [undefined, now()]),
      'invalid_certificate',
      401,
    );
    rejects(() => fingerprintOf('no pem here'), 'invalid_certificate', 401);
  });

  test('a PEM with something other than one certificate', async () => {
    const a = await makeDeviceIdentity({ keyType: 'p256' });
    const b = await makeDeviceIdentity({ keyType: 'p256' });
    rejects(
      () => parseDeviceCertificate(`${a.certificatePem}\n${b.certificatePem}`, now()),
      'invalid_certificate',
      401,
      /more than one/,
    );
    const key = '-----BEGIN PRIVATE KEY-----\nQUJD\n-----END PRIVATE KEY-----';
    rejects(() => parseDeviceCertificate(key, now()), 'invalid_certificate', 401, /not PEM/);
    rejects(
      () => parseDeviceCertificate(`${a.certificatePem}\n${key}`, now()),
      'invalid_certificate',
      401,
      /more than one/,
    );
  });

  test('extra bytes after the DER are refused (the fingerprint must cover exactly the certificate)', async () => {
    const a = await makeDeviceIdentity({ keyType: 'ed25519' });
    const der = Buffer.from(a.certificatePem.replace(/-----[A-Z ]+-----/g, '').replace(/\s+/g, ''), 'base64');
    const padded = Buffer.concat([der, Buffer.from([0, 0, 0])]).toString('base64');
    rejects(
      () =>
        parseDeviceCertificate(`-----BEGIN CERTIFICATE-----\n${padded}\n-----END CERTIFICATE-----`, now()),
      'invalid_certificate',
      401,
    );
  });
});

describe('certificate cache', () => {
  test('a second call for the same certificate skips parsing and returns the same key object', async () => {
    const id = await makeDeviceIdentity({ keyType: 'p256' });
    const first = parseDeviceCertificate(id.certificatePem, now());
    assert.equal(certificateCacheStats().parses, 1);
    const second = parseDeviceCertificate(rewrapped(id.certificatePem), now());
    assert.equal(certificateCacheStats().parses, 1);
    assert.equal(certificateCacheStats().size, 1);
    assert.equal(second.publicKey, first.publicKey);
    assert.deepEqual(second, first);
  });

  test('a cache hit still checks validity against now', async () => {
    const notAfter = new Date(Math.floor(Date.now() / 1000) * 1000 + DAY);
    const id = await makeDeviceIdentity({ keyType: 'ed25519', notAfter });
    parseDeviceCertificate(id.certificatePem, now());
    rejects(
      () => parseDeviceCertificate(id.certificatePem, new Date(notAfter.getTime() + 1000)),
      'invalid_certificate',
      401,
      /expired/,
    );
    assert.equal(certificateCacheStats().parses, 1);
  });

  test('callers cannot change cached dates', async () => {
    const id = await makeDeviceIdentity({ keyType: 'p256' });
    const first = parseDeviceCertificate(id.certificatePem, now());
    const validTo = first.validTo.getTime();
    first.validTo.setTime(0);
    assert.equal(parseDeviceCertificate(id.certificatePem, now()).validTo.getTime(), validTo);
  });

  test('refused certificates are not cached', async () => {
    const id = await makeForeignSignedIdentity({ keyType: 'p256', issuerName: 'same' });
    for (let i = 0; i < 2; i++) {
      rejects(() => parseDeviceCertificate(id.certificatePem, now()), 'invalid_certificate', 401);
    }
    assert.equal(certificateCacheStats().parses, 2);
    assert.equal(certificateCacheStats().size, 0);
  });

  test('bounded, least recently used out first; default capacity 1000', async () => {
    assert.equal(certificateCacheStats().capacity, 1000);
    const [a, b, c] = await Promise.all([
      makeDeviceIdentity({ keyType: 'ed25519' }),
      makeDeviceIdentity({ keyType: 'ed25519' }),
      makeDeviceIdentity({ keyType: 'ed25519' }),
    ]);
    const previous = setCertificateCacheCapacity(2);
    try {
      parseDeviceCertificate(a!.certificatePem, now());
      parseDeviceCertificate(b!.certificatePem, now());
      parseDeviceCertificate(a!.certificatePem, now()); // a is now the most recently used
      parseDeviceCertificate(c!.certificatePem, now()); // evicts b
      assert.deepEqual(certificateCacheStats(), { size: 2, capacity: 2, parses: 3 });
      parseDeviceCertificate(a!.certificatePem, now());
      parseDeviceCertificate(c!.certificatePem, now());
      assert.equal(certificateCacheStats().parses, 3);
      parseDeviceCertificate(b!.certificatePem, now());
      assert.equal(certificateCacheStats().parses, 4);
      setCertificateCacheCapacity(1);
      assert.equal(certificateCacheStats().size, 1);
    } finally {
      setCertificateCacheCapacity(previous);
    }
  });

  test('clear empties the cache and resets the counter', async () => {
    const id = await makeDeviceIdentity({ keyType: 'p256' });
    parseDeviceCertificate(id.certificatePem, now());
    clearCertificateCache();
    assert.deepEqual(certificateCacheStats(), { size: 0, capacity: 1000, parses: 0 });
    parseDeviceCertificate(id.certificatePem, now());
    assert.equal(certificateCacheStats().parses, 1);
  });
});
