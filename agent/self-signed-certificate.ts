// The device's self-signed X.509 v3 certificate (RFC 5280), encoded here in DER: the few structures a device
// certificate needs and nothing else. A certificate library would cost every agent start (the hook's included) the
// parsing of a third of a megabyte for what register does once.
import { type KeyObject, sign } from 'node:crypto';

/** A DER element: tag, definite length, content (X.690 section 8.1). */
function tlv(tag: number, content: Buffer): Buffer {
  const n = content.length;
  const length =
    n < 0x80 ? Buffer.from([n]) : n < 0x100 ? Buffer.from([0x81, n]) : Buffer.from([0x82, n >> 8, n & 0xff]);
  return Buffer.concat([Buffer.from([tag]), length, content]);
}

const sequence = (...items: Buffer[]) => tlv(0x30, Buffer.concat(items));
const set = (...items: Buffer[]) => tlv(0x31, Buffer.concat(items));
const explicit = (n: number, item: Buffer) => tlv(0xa0 + n, item);
const utf8 = (text: string) => tlv(0x0c, Buffer.from(text, 'utf8'));
const octets = (bytes: Buffer) => tlv(0x04, bytes);
const TRUE = tlv(0x01, Buffer.from([0xff]));
/** A BIT STRING of whole bytes, or with `unused` trailing bits of its last byte unused. */
const bits = (bytes: Buffer, unused = 0) => tlv(0x03, Buffer.concat([Buffer.from([unused]), bytes]));

/** A non-negative INTEGER from big-endian bytes: no leading zero byte unless the next has its high bit set. */
function integer(bytes: Buffer): Buffer {
  let i = 0;
  while (i < bytes.length - 1 && bytes[i] === 0) i++;
  const trimmed = bytes.subarray(i);
  return tlv(0x02, (trimmed[0] ?? 0) & 0x80 ? Buffer.concat([Buffer.from([0]), trimmed]) : trimmed);
}

function oid(dotted: string): Buffer {
  const [a = 0, b = 0, ...rest] = dotted.split('.').map(Number);
  const out = [40 * a + b];
  for (const arc of rest) {
    const digits = [arc & 0x7f];
    for (let v = Math.floor(arc / 128); v > 0; v = Math.floor(v / 128)) digits.unshift((v & 0x7f) | 0x80);
    out.push(...digits);
  }
  return tlv(0x06, Buffer.from(out));
}

/** UTCTime for 1950–2049, GeneralizedTime otherwise (RFC 5280 section 4.1.2.5), to the second, in UTC. */
function time(date: Date): Buffer {
  const iso = date.toISOString().replace(/[-:T]/g, '').slice(0, 14);
  const year = date.getUTCFullYear();
  return year >= 1950 && year < 2050
    ? tlv(0x17, Buffer.from(`${iso.slice(2)}Z`))
    : tlv(0x18, Buffer.from(`${iso}Z`));
}

const OIDS = {
  commonName: '2.5.4.3',
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  ed25519: '1.3.101.112',
  basicConstraints: '2.5.29.19',
  keyUsage: '2.5.29.15',
} as const;

export interface CertificateFields {
  commonName: string;
  /** Big-endian bytes of the serial number (RFC 5280: positive, at most 20 bytes). */
  serial: Buffer;
  notBefore: Date;
  notAfter: Date;
}

/**
 * A self-signed certificate over `privateKey` (ECDSA P-256 signed with SHA-256, or Ed25519), as PEM: the subject and
 * issuer are `CN=<commonName>`; basicConstraints (critical) says it is not a CA; keyUsage (critical) allows digital
 * signatures only.
 */
export function selfSignedCertificate(
  privateKey: KeyObject,
  publicKey: KeyObject,
  fields: CertificateFields,
): string {
  const ed25519 = privateKey.asymmetricKeyType === 'ed25519';
  const algorithm = sequence(oid(ed25519 ? OIDS.ed25519 : OIDS.ecdsaWithSha256));
  const name = sequence(set(sequence(oid(OIDS.commonName), utf8(fields.commonName))));
  const extensions = explicit(
    3,
    sequence(
      sequence(oid(OIDS.basicConstraints), TRUE, octets(sequence())),
      // digitalSignature is bit 0: one byte 0x80 with its 7 low bits unused.
      sequence(oid(OIDS.keyUsage), TRUE, octets(bits(Buffer.from([0x80]), 7))),
    ),
  );
  const tbs = sequence(
    explicit(0, integer(Buffer.from([2]))),
    integer(fields.serial),
    algorithm,
    name,
    sequence(time(fields.notBefore), time(fields.notAfter)),
    name,
    publicKey.export({ type: 'spki', format: 'der' }),
    extensions,
  );
  const signature = ed25519
    ? sign(null, tbs, privateKey)
    : sign('sha256', tbs, { key: privateKey, dsaEncoding: 'der' });
  const der = sequence(tbs, algorithm, bits(signature));
  const body = der
    .toString('base64')
    .match(/.{1,64}/g)
    ?.join('\n');
  return `-----BEGIN CERTIFICATE-----\n${body}\n-----END CERTIFICATE-----\n`;
}
