// The config fingerprint of an MCP server: HMAC-SHA256 of its whole entry (RFC 8785 canonical JSON of its name and
// config) under a key that never leaves the device. It changes when anything in the entry changes (an argument, an
// env value, a header), and reveals nothing of it: without the key nobody can test a guess. Each device has its own
// key, so fingerprints compare one device's configs over time, not two devices'.
import { createHmac, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CanonicalizationError, canonicalBytes } from '#shared/core/canonical-json.ts';

const KEY_FILE = 'fingerprint.key';
const KEY_BYTES = 32;

/** JSON has no NaN, Infinity or BigInt; TOML has all three: spelled as text, so that every entry has bytes. */
function jsonSafe(value: unknown): unknown {
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  if (Array.isArray(value)) return value.map(jsonSafe);
  if (value && typeof value === 'object' && !(value instanceof Date)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, jsonSafe(v)]));
  }
  return value;
}

function entryBytes(name: string, config: Record<string, unknown>): Buffer {
  const entry = jsonSafe({ name, config });
  try {
    return canonicalBytes(entry);
  } catch (err) {
    // A lone surrogate in a config string: hashed as JSON.stringify writes it (escaped), still one stable form.
    if (err instanceof CanonicalizationError) return Buffer.from(JSON.stringify(entry));
    throw err;
  }
}

/** 64 lowercase hex characters. */
export function configFingerprint(key: Buffer, name: string, config: Record<string, unknown>): string {
  return createHmac('sha256', key).update(entryBytes(name, config)).digest('hex');
}

/**
 * The device's fingerprint key, in `stateDir`/fingerprint.key (owner-only): made once, on first use. The exclusive
 * create makes two agents starting together agree on one key.
 */
export function loadFingerprintKey(stateDir: string): Buffer {
  const file = join(stateDir, KEY_FILE);
  const read = (): Buffer | undefined => {
    try {
      const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'hex');
      return key.length === KEY_BYTES ? key : undefined;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  };
  const existing = read();
  if (existing) return existing;
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  try {
    writeFileSync(file, `${randomBytes(KEY_BYTES).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const key = read();
  if (!key) throw new Error(`${file} does not hold a ${KEY_BYTES}-byte hex key: remove it to make a new one`);
  return key;
}
