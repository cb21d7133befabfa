import { issueLocalToken } from '../core/auth/local-tokens.ts';
import type { Config } from '../core/config/schema.ts';
import type { Db } from '../core/db/database.ts';
import { unauthenticated } from '../core/errors.ts';
import {
  clearAccountFailures,
  loginKeys,
  readSigninState,
  recordSigninFailure,
  refuseWhileLocked,
  signinPolicy,
} from './lockouts.ts';
import { verifyPassword } from './passwords.ts';
import { principalOf, toUserView } from './users.ts';

/**
 * POST /v1/auth/login for auth.provider = local: a session token for a valid email and password, else 401 (401
 * account_disabled for a disabled account, said only to the right password); 429 while the account (the email given,
 * known or not) from this source address, or the address itself, is locked after too many failures
 * (shared/identity/lockouts.ts). The lock is checked in the same read as the user, before the password is: a
 * locked attempt costs no scrypt and is refused even with the right password.
 */
export async function loginWithPassword(
  config: Config,
  db: Db,
  email: string,
  password: string,
  sourceIp: string,
) {
  const keys = loginKeys(email, sourceIp);
  const { user, keys: states } = await readSigninState(db, email, keys);
  refuseWhileLocked(states);
  const valid = await verifyPassword(password, user?.passwordHash);
  if (!user || !valid) {
    await recordSigninFailure(db, signinPolicy(config), keys, sourceIp);
    throw unauthenticated('The email or password is wrong.', 'invalid_credentials');
  }
  if (user.disabledAt) {
    throw unauthenticated('This account is disabled; an admin can enable it again.', 'account_disabled');
  }
  if (states.some((s) => s.scope === 'account_source')) await clearAccountFailures(db, keys);
  const token = await issueLocalToken(config, { ...principalOf(user), tokenUse: 'session' });
  return { ...token, user: toUserView(user) };
}
