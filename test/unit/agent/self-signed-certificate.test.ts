// The device certificate the agent encodes itself, read back by two readers that are not ours: node:crypto's
// X509Certificate (OpenSSL) and @peculiar/x509. Both key types; any common name; validity dates on both sides of
// the UTCTime / GeneralizedTime boundary (RFC 5280 section 4.1.2.5).
import 'reflect-metadata';
import assert from 'node:assert/strict';
import { createPrivateKey, generateKeyPairSync, X509Certificate } from 'node:crypto';
import { test } from 'node:test';
import * as x509 from '@peculiar/x509';
import fc from 'fast-check';
import { certificateFingerprint, createDeviceIdentity } from '#agent/identity.ts';
import { selfSignedCertificate } from '#agent/self-signed-certificate.ts';
import { independentFingerprint } from '#test/support/device-keys.ts';
import { runs } from '#test/support/runs.ts';

test('both key types: self-signed, not a CA, digital signature only, the key it was made for', async () => {
  for (const keyType of ['p256', 'ed25519'] as const) {
    const identity = await createDeviceIdentity(keyType, { commonName: 'sim-7' });
    const cert = new X509Certificate(identity.certificatePem);
    assert.equal(cert.subject, 'CN=sim-7');
    assert.equal(cert.issuer, 'CN=sim-7');
    assert.ok(cert.verify(cert.publicKey), `${keyType}: the signature verifies with its own key`);
    assert.ok(cert.checkPrivateKey(createPrivateKey(identity.privateKeyPem)));
    assert.equal(cert.ca, false);
    assert.equal(cert.publicKey.asymmetricKeyType, keyType === 'p256' ? 'ec' : 'ed25519');
    assert.equal(identity.fingerprint, independentFingerprint(identity.certificatePem));

    const peculiar = new x509.X509Certificate(identity.certificatePem);
    const basic = peculiar.getExtension(x509.BasicConstraintsExtension);
    const usage = peculiar.getExtension(x509.KeyUsagesExtension);
    assert.equal(basic?.critical, true);
    assert.equal(basic?.ca, false);
    assert.equal(usage?.critical, true);
    assert.equal(usage?.usages, x509.KeyUsageFlags.digitalSignature);
    assert.ok(await peculiar.verify({ signatureOnly: true }));
  }
});

test('any common name and validity round-trips (long names take multi-byte DER lengths)', () => {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const second = 1000;
  const date = fc
    .integer({ min: Date.UTC(1900, 0, 1) / second, max: Date.UTC(2200, 0, 1) / second })
    .map((s) => new Date(s * second));
  fc.assert(
    fc.property(
      fc
        .string({ minLength: 1, maxLength: 300, unit: 'grapheme' })
        .filter((s) => !/[,=+<>#;"\\\n\r\0/]/.test(s)),
      date,
      date,
      fc.uint8Array({ minLength: 1, maxLength: 20 }),
      (commonName, a, b, serial) => {
        const [notBefore, notAfter] = a <= b ? [a, b] : [b, a];
        const pem = selfSignedCertificate(privateKey, publicKey, {
          commonName,
          serial: Buffer.from(serial),
          notBefore,
          notAfter,
        });
        const peculiar = new x509.X509Certificate(pem);
        assert.equal(peculiar.subjectName.getField('CN')[0], commonName);
        assert.equal(peculiar.notBefore.getTime(), notBefore.getTime());
        assert.equal(peculiar.notAfter.getTime(), notAfter.getTime());
        assert.equal(
          BigInt(`0x${peculiar.serialNumber}`),
          BigInt(`0x${Buffer.from(serial).toString('hex')}`),
        );
        assert.ok(new X509Certificate(pem).verify(publicKey));
        assert.equal(certificateFingerprint(pem), independentFingerprint(pem));
      },
    ),
    { numRuns: runs(150) },
  );
});
