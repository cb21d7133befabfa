// The device identity of the reference agent: one private key (ECDSA P-256 or Ed25519) and a self-signed X.509 v3
// certificate over it, kept in the agent's state directory (device-protocol.md, "Keys and certificates").
import { createHash, createPrivateKey, type KeyObject, randomUUID, webcrypto } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import type { AgentState } from './state.ts';

export type KeyType = 'p256' | 'ed25519';

export interface DeviceIdentity {
  keyType: KeyType;
  privateKeyPem: string;
  certificatePem: string;
  fingerprint: string;
}

const ALGORITHMS = {
  p256: { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' },
  ed25519: { name: 'Ed25519' },
} as const;

/** Lowercase hex SHA-256 over the certificate's DER bytes (the device's identity on every signed call). */
export function certificateFingerprint(pem: string): string {
  const der = Buffer.from(pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''), 'base64');
  return createHash('sha256').update(der).digest('hex');
}

export async function createDeviceIdentity(
  keyType: KeyType = 'p256',
  options: { commonName?: string; notBefore?: Date; notAfter?: Date } = {},
): Promise<DeviceIdentity> {
  const algorithm = ALGORITHMS[keyType];
  const keys = (await webcrypto.subtle.generateKey(algorithm, true, [
    'sign',
    'verify',
  ])) as webcrypto.CryptoKeyPair;
  const notBefore = options.notBefore ?? new Date(Date.now() - 60_000);
  const cert = await x509.X509CertificateGenerator.createSelfSigned(
    {
      serialNumber: randomUUID().replace(/-/g, '').slice(0, 16),
      name: `CN=${options.commonName ?? `device-${hostname()}`}`,
      notBefore,
      notAfter: options.notAfter ?? new Date(notBefore.getTime() + 365 * 86_400_000),
      signingAlgorithm: algorithm,
      keys,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      ],
    },
    webcrypto as unknown as Parameters<typeof x509.X509CertificateGenerator.createSelfSigned>[1],
  );
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  const privateKeyPem = `-----BEGIN PRIVATE KEY-----\n${pkcs8
    .toString('base64')
    .match(/.{1,64}/g)
    ?.join('\n')}\n-----END PRIVATE KEY-----\n`;
  const certificatePem = cert.toString('pem');
  return { keyType, privateKeyPem, certificatePem, fingerprint: certificateFingerprint(certificatePem) };
}

export const privateKeyOf = (identity: DeviceIdentity): KeyObject => createPrivateKey(identity.privateKeyPem);

// The state file is read and written by state.ts, which loads no certificate library; re-exported for importers.
export { type AgentState, loadState, saveState } from './state.ts';

function readDmi(name: string): string | undefined {
  try {
    const value = readFileSync(`/sys/class/dmi/id/${name}`, 'utf8').trim();
    return value && !/^(none|default string|to be filled|system serial number|0+)$/i.test(value)
      ? value
      : undefined;
  } catch {
    return undefined;
  }
}

/** Hardware serial, maker and model where the OS exposes them; otherwise a persisted UUID and a fallback marker. */
export function hardwareInfo(state: AgentState): { serialNumber: string; brand: string; model: string } {
  const serial = readDmi('product_serial');
  const vendor = readDmi('sys_vendor');
  if (serial && vendor)
    return { serialNumber: serial, brand: vendor, model: readDmi('product_name') ?? hostname() };
  state.fallbackSerial ??= randomUUID();
  return { serialNumber: state.fallbackSerial, brand: 'fallback', model: hostname() };
}
