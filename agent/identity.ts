// The device identity of the reference agent: one private key (ECDSA P-256 or Ed25519) and a self-signed X.509 v3
// certificate over it, kept in the agent's state directory (device-protocol.md, "Keys and certificates").
import {
  createHash,
  createPrivateKey,
  generateKeyPairSync,
  type KeyObject,
  randomBytes,
  randomUUID,
} from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { selfSignedCertificate } from './self-signed-certificate.ts';
import type { AgentState } from './state.ts';

export type KeyType = 'p256' | 'ed25519';

export interface DeviceIdentity {
  keyType: KeyType;
  privateKeyPem: string;
  certificatePem: string;
  fingerprint: string;
}

/** Lowercase hex SHA-256 over the certificate's DER bytes (the device's identity on every signed call). */
export function certificateFingerprint(pem: string): string {
  const der = Buffer.from(pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''), 'base64');
  return createHash('sha256').update(der).digest('hex');
}

export async function createDeviceIdentity(
  keyType: KeyType = 'p256',
  options: { commonName?: string; notBefore?: Date; notAfter?: Date } = {},
): Promise<DeviceIdentity> {
  const { privateKey, publicKey } =
    keyType === 'ed25519'
      ? generateKeyPairSync('ed25519')
      : generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const notBefore = options.notBefore ?? new Date(Date.now() - 60_000);
  const certificatePem = selfSignedCertificate(privateKey, publicKey, {
    commonName: options.commonName ?? `device-${hostname()}`,
    // 64 random bits, first bit clear: a positive serial of 8 bytes (RFC 5280 section 4.1.2.2).
    serial: Buffer.from(randomBytes(8).map((b, i) => (i === 0 ? b & 0x7f : b))),
    notBefore,
    notAfter: options.notAfter ?? new Date(notBefore.getTime() + 365 * 86_400_000),
  });
  const privateKeyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
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
