// npm start's JWT secret when none is configured: generated once into its data directory (data_dir, file jwt-secret,
// owner-only), then read from there on every later start, so that tokens survive a restart and no secret that signs
// anything is ever in the repository. A deployment never comes here: env = "prod" requires the configured secret
// (Secrets Manager), and the config refuses to load without it.
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '#shared/core/config/load.ts';

export const JWT_SECRET_FILE = 'jwt-secret';

export interface LocalJwtSecret {
  value: string;
  file: string;
  /** Written by this start (the first), or read from an earlier one. */
  generated: boolean;
}

/** The secret's setting, for messages: what it is for, and what sets it instead of the file. */
interface SecretKey {
  key: string;
  instead: string;
}
const JWT_KEY: SecretKey = { key: 'auth.jwt_secret', instead: ', or set SVC_JWT_SECRET' };

const fail = ({ key, instead }: SecretKey, file: string, why: string) =>
  new ConfigError(`${key}: ${file} ${why} (delete it to generate a new one${instead})`);

function readExisting(key: SecretKey, file: string): LocalJwtSecret {
  // Like ssh with a private key: a secret others can read is not used.
  const mode = statSync(file).mode & 0o777;
  if (process.platform !== 'win32' && (mode & 0o077) !== 0) {
    throw fail(key, file, `is readable by others (mode ${mode.toString(8)}; chmod 600 it)`);
  }
  const value = readFileSync(file, 'utf8').trim();
  if (Buffer.byteLength(value, 'utf8') < 32) throw fail(key, file, 'holds fewer than 32 bytes');
  return { value, file, generated: false };
}

/** The secret in `dataDir`, generated there (256 random bits, mode 0600) when the file does not exist yet. */
export function localJwtSecret(dataDir: string): LocalJwtSecret {
  return localSecret(dataDir, JWT_SECRET_FILE, JWT_KEY);
}

/** A secret of npm start's own in the file `name` of `dataDir`, generated there as localJwtSecret's is. */
export function localSecret(dataDir: string, name: string, key: SecretKey | string): LocalJwtSecret {
  const setting = typeof key === 'string' ? { key, instead: '' } : key;
  const file = join(dataDir, name);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const value = randomBytes(32).toString('base64url');
  try {
    // wx: only when no file is there, so that two first starts racing keep the one that was written first.
    writeFileSync(file, `${value}\n`, { flag: 'wx', mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return readExisting(setting, file);
    throw err;
  }
  // The mode given to open() is narrowed by the umask, never widened: set it exactly.
  chmodSync(file, 0o600);
  return { value, file, generated: true };
}
