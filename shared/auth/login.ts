import type { Config } from '../config/schema.ts';
import type { Db } from '../db/database.ts';
import { findUserByEmail, principalOf, toUserView } from '../domain/users.ts';
import { unauthorized } from '../http/errors.ts';
import { issueLocalToken } from './local-tokens.ts';
import { verifyPassword } from './passwords.ts';

/** POST /v1/auth/login for auth.provider = local: a session token for a valid email and password, else 401. */
export async function loginWithPassword(config: Config, db: Db, email: string, password: string) {
  const user = await findUserByEmail(db, email);
  const valid = await verifyPassword(password, user?.passwordHash);
  if (!user || !valid) throw unauthorized('The email or password is wrong.', 'invalid_credentials');
  const token = await issueLocalToken(config, { ...principalOf(user), tokenUse: 'session' });
  return { ...token, user: toUserView(user) };
}
