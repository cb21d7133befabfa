// Raw signed device requests built from the protocol text (device-protocol.md), so that tests can also send what
// a correct agent never would: tampered bodies, other keys, old timestamps, replays, odd base64 alphabets.
import 'reflect-metadata';
import { createHash, randomUUID, sign, webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import { createDeviceIdentity, type DeviceIdentity, privateKeyOf } from '#agent/identity.ts';
import { canonicalize } from '#shared/core/canonical-json.ts';

export type Encoding = 'std' | 'unpadded' | 'url';

export function encode(signature: Buffer, encoding: Encoding): string {
  const std = signature.toString('base64');
  if (encoding === 'std') return std;
  if (encoding === 'unpadded') return std.replace(/=+$/, '');
  return std.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export function rawSign(identity: DeviceIdentity, bytes: Buffer, encoding: Encoding = 'std'): string {
  const key = privateKeyOf(identity);
  const sig =
    identity.keyType === 'ed25519'
      ? sign(null, bytes, key)
      : sign('sha256', bytes, { key, dsaEncoding: 'der' });
  return encode(sig, encoding);
}

/** The fingerprint computed independently of the service: SHA-256 over the DER inside the PEM. */
export function independentFingerprint(pem: string): string {
  const der = new x509.X509Certificate(pem).rawData;
  return createHash('sha256').update(Buffer.from(der)).digest('hex');
}

export interface SignedOptions {
  token?: string;
  encoding?: Encoding;
  /** Sign with this identity instead of the one whose certificate is in the body. */
  signer?: DeviceIdentity;
  clientTimestamp?: string;
  /** Changes the body after signing (tampering). */
  tamper?: (body: Record<string, unknown>) => void;
  /**
   * How the body goes on the wire: `json` = JSON.stringify of the fields in insertion order (not the canonical
   * form: the service must canonicalize), `canonical` = the very RFC 8785 bytes that were signed (what the
   * reference agent sends), `pretty` = indented JSON.
   */
  wire?: 'json' | 'canonical' | 'pretty';
}

export interface PreparedRequest {
  path: string;
  headers: Record<string, string>;
  body: string;
}

export function prepare(
  path: string,
  identity: DeviceIdentity,
  fields: Record<string, unknown>,
  options: SignedOptions = {},
): PreparedRequest {
  const body: Record<string, unknown> = {
    ...fields,
    certificate: identity.certificatePem,
    clientTimestamp: options.clientTimestamp ?? new Date().toISOString(),
  };
  const signature = rawSign(
    options.signer ?? identity,
    Buffer.from(canonicalize(body), 'utf8'),
    options.encoding,
  );
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (path.endsWith('/register')) body.signature = signature;
  else headers['x-device-signature'] = signature;
  options.tamper?.(body);
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const wire =
    options.wire === 'canonical'
      ? canonicalize(body)
      : options.wire === 'pretty'
        ? JSON.stringify(body, null, 2)
        : JSON.stringify(body);
  return { path, headers, body: wire };
}

export async function send(baseUrl: string, request: PreparedRequest) {
  const res = await fetch(`${baseUrl}${request.path}`, {
    method: 'POST',
    headers: request.headers,
    body: request.body,
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as Record<string, unknown> };
}

export const hardware = (serial = `SN-${randomUUID().slice(0, 8)}`) => ({
  serialNumber: serial,
  brand: 'Lenovo',
  model: 'ThinkPad X1',
  ownerEmail: 'someone-else@example.test',
});

/** A new P-256 device, registered with `token` (a user's): its identity, for signed inventory and events. */
export async function enrolledDevice(baseUrl: string, token: string): Promise<DeviceIdentity> {
  const identity = await createDeviceIdentity('p256');
  const res = await send(baseUrl, prepare('/v1/devices/register', identity, hardware(), { token }));
  if (res.status !== 201) throw new Error(`register answered ${res.status}: ${JSON.stringify(res.body)}`);
  return identity;
}

/**
 * One event as an agent reports it (POST /v1/devices/events): a fresh event_id, the time now, an allowed
 * invocation of github's search_code by Claude Code; `over` adds or replaces fields.
 */
export const invocationEvent = (over: Record<string, unknown> = {}) => ({
  event_id: randomUUID(),
  event_time: new Date().toISOString(),
  agent_type: 'claude-code',
  mcp_name: 'github',
  tool: 'search_code',
  event_type: 'invocation',
  result: 'allowed',
  ...over,
});

type GeneratorCrypto = Parameters<typeof x509.X509CertificateGenerator.create>[1];
const pkcs8Pem = async (key: webcrypto.CryptoKey) =>
  `-----BEGIN PRIVATE KEY-----\n${Buffer.from(await webcrypto.subtle.exportKey('pkcs8', key)).toString('base64')}\n-----END PRIVATE KEY-----\n`;

/** A certificate over a P-384 key (not accepted by the protocol). */
export async function p384Identity(): Promise<DeviceIdentity> {
  const alg = { name: 'ECDSA', namedCurve: 'P-384', hash: 'SHA-384' };
  const keys = (await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const cert = await x509.X509CertificateGenerator.createSelfSigned(
    {
      serialNumber: '01',
      name: 'CN=p384',
      notBefore: new Date(Date.now() - 60_000),
      notAfter: new Date(Date.now() + 86_400_000),
      signingAlgorithm: alg,
      keys,
    },
    webcrypto as unknown as GeneratorCrypto,
  );
  const pem = cert.toString('pem');
  return {
    keyType: 'p256',
    privateKeyPem: await pkcs8Pem(keys.privateKey),
    certificatePem: pem,
    fingerprint: independentFingerprint(pem),
  };
}

/** A P-256 certificate issued (signed) by another key: not self-signed. */
export async function issuedIdentity(): Promise<DeviceIdentity> {
  const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const issuer = (await webcrypto.subtle.generateKey(alg, true, [
    'sign',
    'verify',
  ])) as webcrypto.CryptoKeyPair;
  const keys = (await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const cert = await x509.X509CertificateGenerator.create(
    {
      serialNumber: '02',
      subject: 'CN=device',
      issuer: 'CN=some-ca',
      notBefore: new Date(Date.now() - 60_000),
      notAfter: new Date(Date.now() + 86_400_000),
      signingAlgorithm: alg,
      publicKey: keys.publicKey,
      signingKey: issuer.privateKey,
    },
    webcrypto as unknown as GeneratorCrypto,
  );
  const pem = cert.toString('pem');
  return {
    keyType: 'p256',
    privateKeyPem: await pkcs8Pem(keys.privateKey),
    certificatePem: pem,
    fingerprint: independentFingerprint(pem),
  };
}

export const expiredIdentity = () =>
  createDeviceIdentity('p256', {
    notBefore: new Date(Date.now() - 10 * 86_400_000),
    notAfter: new Date(Date.now() - 86_400_000),
  });
