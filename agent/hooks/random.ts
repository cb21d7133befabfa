// Random ids for the hook without loading node:crypto, whose start-up (with the stream modules it pulls in) would
// be a good part of the hook's added latency: bytes from the OS's /dev/urandom, or node:crypto where there is none
// (Windows).
import { openSync, readSync } from 'node:fs';

let urandom: number | undefined;

export function randomBytes(n: number): Buffer {
  const bytes = Buffer.allocUnsafe(n);
  try {
    urandom ??= openSync('/dev/urandom', 'r');
    if (readSync(urandom, bytes, 0, n, null) === n) return bytes;
  } catch {}
  return process.getBuiltinModule('node:crypto').randomBytes(n);
}

/** A version 4 UUID (RFC 9562). */
export function randomUUID(): string {
  const b = randomBytes(16);
  b[6] = ((b[6] as number) & 0x0f) | 0x40;
  b[8] = ((b[8] as number) & 0x3f) | 0x80;
  const hex = b.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
