/**
 * Real device keys and X.509 v3 certificates for tests (and a model for the reference agent): keys from node's
 * WebCrypto, certificates from @peculiar/x509. Nothing here uses the code under test, so that the fingerprint and
 * the signatures are computed independently of shared/device.
 */
import 'reflect-metadata';
import { createHash, KeyObject, sign, webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(globalThis.crypto);

type CryptoKeyPair = webcrypto.CryptoKeyPair;

export type TestKeyType = 'p256' | 'ed25519' | 'p384' | 'rsa';
export type SignatureEncoding = 'std' | 'unpadded' | 'url' | 'url-padded';

const DAY = 24 * 60 * 60 * 1000;

const KEY_ALGORITHMS = {
  p256: {
    generate: { name: 'ECDSA', namedCurve: 'P-256' },
    sign: { name: 'ECDSA', hash: 'SHA-256' },
  },
  p384: {
    generate: { name: 'ECDSA', namedCurve: 'P-384' },
    sign: { name: 'ECDSA', hash: 'SHA-384' },
  },
  ed25519: { generate: { name: 'Ed25519' }, sign: { name: 'Ed25519' } },
  rsa: {
    generate: {
      name: 'RSASSA-PKCS1-v1_5',
      modulusLength: 2048,
      publicExponent: new Uint8Array([1, 0, 1]),
      hash: 'SHA-256',
    },
    sign: { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' },
  },
} as const;

export interface DeviceIdentity {
  keyType: TestKeyType;
  privateKey: KeyObject;
  publicKey: KeyObject;
  certificatePem: string;
  /** Lowercase hex SHA-256 over the DER, computed here from the PEM text. */
  fingerprint: string;
}

export interface IdentityOptions {
  keyType: TestKeyType;
  notBefore?: Date;
  notAfter?: Date;
  /** Distinguished name, e.g. `CN=device-1`. Default: a random CN. */
  subject?: string;
}

async function generateKeys(keyType: TestKeyType): Promise<CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(KEY_ALGORITHMS[keyType].generate, true, [
    'sign',
    'verify',
  ])) as CryptoKeyPair;
}

/** The SHA-256 of the DER inside a PEM certificate, decoded here without node:crypto's X509Certificate. */
export function independentFingerprint(pem: string): string {
  const body = pem
    .replace(/-----BEGIN CERTIFICATE-----/, '')
    .replace(/-----END CERTIFICATE-----/, '')
    .replace(/\s+/g, '');
  return createHash('sha256').update(Buffer.from(body, 'base64')).digest('hex');
}

const deviceExtensions = async (keys: CryptoKeyPair) => [
  new x509.BasicConstraintsExtension(false, undefined, true),
  new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
  await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
];

const randomSerial = () => Buffer.from(webcrypto.getRandomValues(new Uint8Array(8))).toString('hex');

function identityFrom(keyType: TestKeyType, keys: CryptoKeyPair, cert: x509.X509Certificate): DeviceIdentity {
  const certificatePem = cert.toString('pem');
  return {
    keyType,
    privateKey: KeyObject.from(keys.privateKey),
    publicKey: KeyObject.from(keys.publicKey),
    certificatePem,
    fingerprint: independentFingerprint(certificatePem),
  };
}

/** A device key and a self-signed X.509 v3 certificate over it (default validity: yesterday to in a year). */
export async function makeDeviceIdentity(options: IdentityOptions): Promise<DeviceIdentity> {
  const keys = await generateKeys(options.keyType);
  const name = options.subject ?? `CN=device-${randomSerial()}, O=Test Devices`;
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerial(),
    name,
    notBefore: options.notBefore ?? new Date(Date.now() - DAY),
    notAfter: options.notAfter ?? new Date(Date.now() + 365 * DAY),
    keys,
    signingAlgorithm: KEY_ALGORITHMS[options.keyType].sign,
    extensions: await deviceExtensions(keys),
  });
  return identityFrom(options.keyType, keys, cert);
}

/**
 * A device key whose certificate is NOT self-signed: it is signed by another key (a would-be CA). With
 * `issuerName: 'same'` the issuer name equals the subject, so only the signature check can catch it.
 */
export async function makeForeignSignedIdentity(
  options: IdentityOptions & { issuerName?: 'other' | 'same' },
): Promise<DeviceIdentity> {
  const keys = await generateKeys(options.keyType);
  const signer = await generateKeys(options.keyType);
  const subject = options.subject ?? `CN=device-${randomSerial()}`;
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerial(),
    subject,
    issuer: options.issuerName === 'same' ? subject : 'CN=Some Other CA',
    notBefore: options.notBefore ?? new Date(Date.now() - DAY),
    notAfter: options.notAfter ?? new Date(Date.now() + 365 * DAY),
    publicKey: keys.publicKey,
    signingKey: signer.privateKey,
    signingAlgorithm: KEY_ALGORITHMS[options.keyType].sign,
    extensions: await deviceExtensions(keys),
  });
  return identityFrom(options.keyType, keys, cert);
}

/** Base64 in one of the accepted spellings: standard padded, standard unpadded, URL-safe unpadded or padded. */
export function encodeSignature(bytes: Uint8Array, encoding: SignatureEncoding = 'std'): string {
  const std = Buffer.from(bytes).toString('base64');
  switch (encoding) {
    case 'std':
      return std;
    case 'unpadded':
      return std.replace(/=+$/, '');
    case 'url':
      return Buffer.from(bytes).toString('base64url');
    case 'url-padded':
      return std.replace(/\+/g, '-').replace(/\//g, '_');
  }
}

/** Raw signature bytes as a device makes them: ECDSA with SHA-256 (DER) for P-256, pure Ed25519. */
export function signBytes(privateKey: KeyObject, keyType: TestKeyType, bytes: Uint8Array): Buffer {
  switch (keyType) {
    case 'p256':
      return sign('sha256', bytes, { key: privateKey, dsaEncoding: 'der' });
    case 'p384':
      return sign('sha384', bytes, { key: privateKey, dsaEncoding: 'der' });
    case 'rsa':
      return sign('sha256', bytes, privateKey);
    case 'ed25519':
      return sign(null, bytes, privateKey);
  }
}

/** A device signature over `bytes`, base64-encoded as asked. */
export function signPayload(
  privateKey: KeyObject,
  keyType: TestKeyType,
  bytes: Uint8Array,
  encoding: SignatureEncoding = 'std',
): string {
  return encodeSignature(signBytes(privateKey, keyType, bytes), encoding);
}

/** A key and a self-signed certificate for a TLS server on `host` (a service whose certificate no one trusts). */
export async function selfSignedTls(host: string): Promise<{ key: string; cert: string }> {
  const identity = await makeDeviceIdentity({ keyType: 'p256', subject: `CN=${host}` });
  return {
    key: identity.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    cert: identity.certificatePem,
  };
}
