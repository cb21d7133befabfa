// A destination's secret, by its secret_ref: from Secrets Manager (the secret named exports.secret_prefix +
// secret_ref; the stack grants the deliver function that prefix only) or, locally, from exports.secrets. Read once per
// instance and kept for a few minutes, so that a rotated secret is picked up without a redeploy.
import type { Config } from '../../core/config/schema.ts';
import { readSecret } from '../../core/config/secrets.ts';

const KEEP_MS = 5 * 60_000;
const cache = new Map<string, { value: string; until: number }>();

export async function destinationSecret(
  config: Pick<Config, 'exports'>,
  ref: string | null,
  read: (id: string) => Promise<string> = readSecret,
): Promise<string | undefined> {
  if (ref === null) return undefined;
  const { secret_store, secret_prefix, secrets } = config.exports;
  if (secret_store === 'config') {
    const value = secrets[ref];
    if (value === undefined) throw new Error(`no secret ${ref} in exports.secrets`);
    return value;
  }
  const id = `${secret_prefix}${ref}`;
  const hit = cache.get(id);
  if (hit && hit.until > Date.now()) return hit.value;
  let value: string;
  try {
    value = await read(id);
  } catch {
    throw new Error(`secret ${ref} could not be read from Secrets Manager`);
  }
  cache.set(id, { value, until: Date.now() + KEEP_MS });
  return value;
}
