import { count, desc, eq, sql } from 'drizzle-orm';
import { type AuditActor, recordAudit } from '../audit/audit.ts';
import type { Principal, Role } from '../core/auth/principal.ts';
import type { Db } from '../core/db/database.ts';
import { sqlState } from '../core/db/errors.ts';
import { users } from '../core/db/schema.ts';
import { conflict } from '../core/errors.ts';
import { generatePassword, hashPassword, verifyPassword } from './passwords.ts';

export type UserRow = typeof users.$inferSelect;

export interface UserView {
  id: string;
  email: string;
  name: string;
  roles: Role[];
  created_at: string;
  updated_at: string;
}

export const toUserView = (row: UserRow): UserView => ({
  id: row.id,
  email: row.email,
  name: row.name,
  roles: row.roles as Role[],
  created_at: row.createdAt.toISOString(),
  updated_at: row.updatedAt.toISOString(),
});

export const principalOf = (row: UserRow): Omit<Principal, 'tokenUse'> => ({
  subject: row.id,
  email: row.email,
  name: row.name,
  roles: row.roles as Role[],
});

/** The condition of the local user with this email (the identity provider's people do not sign in by email). */
export const localUserByEmail = (email: string) =>
  sql`lower(${users.email}) = lower(${email}) AND ${users.idpSubject} IS NULL`;

export async function findUserByEmail(db: Db, email: string): Promise<UserRow | undefined> {
  const [row] = await db.select().from(users).where(localUserByEmail(email)).limit(1);
  return row;
}

export interface NewUser {
  email: string;
  name: string;
  password: string;
  roles: Role[];
}

/** Creates a user and its audit record in one transaction; a taken email is 409 email_taken. */
export async function createUser(db: Db, input: NewUser, actor: AuditActor): Promise<UserView> {
  const passwordHash = await hashPassword(input.password);
  try {
    return await db.transaction(async (tx) => {
      const [row] = await tx
        .insert(users)
        .values({ email: input.email, name: input.name, passwordHash, roles: input.roles })
        .returning();
      const user = row as UserRow;
      await recordAudit(tx, {
        actionType: 'user.created',
        actor,
        resourceType: 'user',
        resourceId: user.id,
        metadata: { email: user.email, roles: user.roles },
      });
      return toUserView(user);
    });
  } catch (err) {
    if (sqlState(err) === '23505')
      throw conflict('email_taken', `A user with email ${input.email} already exists.`);
    throw err;
  }
}

export async function listUsers(db: Db, page: { limit: number; offset: number }) {
  const [rows, [total]] = [
    await db
      .select()
      .from(users)
      .orderBy(desc(users.createdAt), desc(users.id))
      .limit(page.limit)
      .offset(page.offset),
    await db.select({ n: count() }).from(users),
  ];
  return {
    users: rows.map(toUserView),
    total: Number(total?.n ?? 0),
    limit: page.limit,
    offset: page.offset,
  };
}

export async function getUser(db: Db, id: string): Promise<UserRow | undefined> {
  const [row] = await db.select().from(users).where(eq(users.id, id)).limit(1);
  return row;
}

export interface BootstrapAdmin {
  created: boolean;
  email: string;
  /** Set when this start made up the password: the caller prints it once. */
  generatedPassword?: string;
  /** The admin already existed and the configured password is not its password: it was left unchanged. */
  passwordNotApplied?: boolean;
}

/**
 * The first admin: created once from SVC_ADMIN_EMAIL / SVC_ADMIN_PASSWORD, never overwritten. A local start
 * without them creates admin@localhost with a random password, returned so the caller can print it once. A
 * configured password that differs from the existing admin's is reported, so that the start can say so rather than
 * leave the operator to find out at the first failed login.
 */
export async function ensureBootstrapAdmin(
  db: Db,
  options: { email: string; password: string; allowGenerated: boolean },
): Promise<BootstrapAdmin> {
  const email = options.email || 'admin@localhost';
  const existing = await findUserByEmail(db, email);
  if (existing) {
    const notApplied =
      options.password !== '' && !(await verifyPassword(options.password, existing.passwordHash));
    return { created: false, email, ...(notApplied ? { passwordNotApplied: true } : {}) };
  }
  if (!options.password && !options.allowGenerated) return { created: false, email };
  const password = options.password || generatePassword();
  try {
    await createUser(
      db,
      { email, name: 'Administrator', password, roles: ['admin', 'user'] },
      { id: 'system', email: 'system', ipAddress: '' },
    );
  } catch (err) {
    // Another instance created it first: that one wins, ours is not written.
    if ((err as { code?: string }).code === 'email_taken') return { created: false, email };
    throw err;
  }
  return { created: true, email, ...(options.password ? {} : { generatedPassword: password }) };
}
