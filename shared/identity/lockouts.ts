// Sign-in throttling: failed sign-ins are counted per key in the database (table signin_lockouts), so that every
// Lambda instance sees the same counts, and a key past its threshold is locked.
//
// - Keys: at POST /v1/auth/login the account together with the source address (scope account_source: the
//   lower-cased email given, whether or not such a user exists, so that the answers never tell which emails are
//   registered) and the source address alone (scope source); at POST /v1/auth/cli/token the source address, in a
//   scope of its own. There is no key of the account alone: a lock on it would let anyone anywhere lock its owner
//   out. A guesser is slowed where it guesses from, and its address is locked across the accounts it tries.
// - Policy (config [auth]): after signin_max_failures failures of an account from one address
//   (signin_max_failures_per_source of an address) the key is locked for signin_lockout, doubling with each further
//   failure, at most signin_failure_window. Failures count until a whole window passes without one.
// - While a key is locked, an attempt is refused with 429 too_many_attempts and Retry-After before the password is
//   verified: no scrypt cost, and a right password is refused too, so the lock cannot be used to test guesses. The
//   same account from another address is not refused. A refused attempt writes nothing. A successful sign-in clears
//   its account's failures from its address (not the address's own).
//
// Statements: the lock check is part of the one read a sign-in makes before verifying (with the user lookup). A
// failure is one statement: an upsert of every key (ON CONFLICT DO UPDATE computes the new count from the row as
// locked, so concurrent failures on any number of instances each count once), which also inserts the audit record
// of each lock it starts, in the same statement. A success with failures on record deletes them (a second
// statement only then).
import { isIPv4, isIPv6 } from 'node:net';
import { and, count, desc, eq, isNull, lt, or, type SQL, sql } from 'drizzle-orm';
import { type AuditActor, auditInsertFromRowsSql, recordAudit } from '../audit/audit.ts';
import type { Config } from '../core/config/schema.ts';
import type { Db } from '../core/db/database.ts';
import { col, fromJson, queryRows } from '../core/db/query.ts';
import { signinLockouts, users } from '../core/db/schema.ts';
import { notFound, rateLimited } from '../core/errors.ts';
import { type ListSigninLockoutsQuery, SIGNIN_SCOPES, type SigninScope } from './lockout-schemas.ts';
import { localUserByEmail, type UserRow } from './users.ts';

export interface SigninPolicy {
  /** Failures within a window that lock a key of each scope. */
  maxFailures: Readonly<Record<SigninScope, number>>;
  /** The first lock; each further failure doubles it. */
  lockoutMs: number;
  /** Failures count until a whole window passes without one; no lock is longer. */
  windowMs: number;
}

export const signinPolicy = (config: Pick<Config, 'auth'>): SigninPolicy => ({
  maxFailures: {
    account_source: config.auth.signin_max_failures,
    source: config.auth.signin_max_failures_per_source,
    cli_source: config.auth.signin_max_failures_per_source,
  },
  lockoutMs: config.auth.signin_lockout,
  windowMs: config.auth.signin_failure_window,
});

/** Doublings past which a lock is the window anyway (2^40 × 1 ms is 35 years); keeps the arithmetic finite. */
const MAX_DOUBLINGS = 40;

/**
 * The lock that the `failures`-th failure of a window starts, in milliseconds (0 below the threshold): the base
 * lockout at the threshold, doubled for each failure after it, at most the window. The upsert computes the same in
 * SQL (lockedUntilSql).
 */
export function lockDurationMs(failures: number, maxFailures: number, policy: SigninPolicy): number {
  if (failures < maxFailures) return 0;
  return Math.min(policy.lockoutMs * 2 ** Math.min(failures - maxFailures, MAX_DOUBLINGS), policy.windowMs);
}

export interface SigninKey {
  scope: SigninScope;
  key: string;
}

/** The account key: the email as given, trimmed and lower-cased (an unknown email is counted all the same). */
export const accountKey = (email: string): string => email.trim().toLowerCase();

/** The eight 16-bit groups of an IPv6 address (an embedded IPv4 tail becomes the last two). */
function ipv6Groups(address: string): number[] {
  let text = address;
  const tail: number[] = [];
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = (v4[1] as string).split('.').map(Number) as [number, number, number, number];
    tail.push((a << 8) | b, (c << 8) | d);
    text = text.slice(0, -(v4[1] as string).length);
    if (text.endsWith(':') && !text.endsWith('::')) text = text.slice(0, -1);
  }
  const [head = '', rest] = text.split('::') as [string, string | undefined];
  const parse = (part: string) => (part ? part.split(':').map((g) => Number.parseInt(g, 16)) : []);
  const left = parse(head);
  const right = [...parse(rest ?? ''), ...tail];
  const missing = 8 - left.length - right.length;
  return rest === undefined && missing === 0
    ? [...left, ...right]
    : [...left, ...Array(missing).fill(0), ...right];
}

/**
 * The source key of an address: an IPv4 address as it is; an IPv6 address by its /64 (one subscriber's network:
 * counting single addresses there would give an attacker 2^64 of them); an IPv4-mapped IPv6 address as its IPv4
 * address. Undefined when the address is unknown.
 */
export function sourceKey(address: string): string | undefined {
  const plain = address.trim().replace(/%.*$/, '');
  if (!plain) return undefined;
  if (isIPv4(plain)) return plain;
  if (!isIPv6(plain)) return plain.toLowerCase();
  const groups = ipv6Groups(plain);
  if (groups.slice(0, 6).join(',') === '0,0,0,0,0,65535') {
    const [hi = 0, lo = 0] = groups.slice(6);
    return [hi >> 8, hi & 255, lo >> 8, lo & 255].join('.');
  }
  // RFC 5952 text of the network address: its zero groups at the end (at least the last four) become `::`.
  const network = groups.slice(0, 4);
  while (network.length && network.at(-1) === 0) network.pop();
  return `${network.map((g) => g.toString(16)).join(':')}::/64`;
}

/** Where an address is unknown, its part of an account_source key (never an address). */
const UNKNOWN_SOURCE = '-';

/**
 * The key of an account at a source: the source key, a space, the account key (a source key holds no space, so the
 * first one splits them; the email may hold any).
 */
export const accountSourceKey = (email: string, source: string | undefined): string =>
  `${source ?? UNKNOWN_SOURCE} ${accountKey(email)}`;

/** The account and the source of a key, as the admin list shows them. */
export function keyParts(scope: SigninScope, key: string): { account: string | null; source: string | null } {
  if (scope !== 'account_source') return { account: null, source: key };
  const space = key.indexOf(' ');
  const source = key.slice(0, space);
  return { account: key.slice(space + 1), source: source === UNKNOWN_SOURCE ? null : source };
}

/** The keys a sign-in attempt is counted by. */
export function loginKeys(email: string, sourceIp: string): SigninKey[] {
  const source = sourceKey(sourceIp);
  return [
    { scope: 'account_source', key: accountSourceKey(email, source) },
    ...(source ? [{ scope: 'source' as const, key: source }] : []),
  ];
}

export function cliExchangeKeys(sourceIp: string): SigninKey[] {
  const source = sourceKey(sourceIp);
  return source ? [{ scope: 'cli_source', key: source }] : [];
}

/** A key's state as the lock check reads it. */
export interface KeyState {
  scope: SigninScope;
  failures: number;
  locked: boolean;
  retry_after_s: number | null;
}

const keyList = (keys: readonly SigninKey[]) =>
  sql.join(
    keys.map((k) => sql`(${k.scope}::text, ${k.key}::text)`),
    sql`, `,
  );

/** A scalar subquery: the keys' rows still within their window, as a json array of KeyState. */
function keyStatesSql(keys: readonly SigninKey[]): SQL {
  if (keys.length === 0) return sql`'[]'::json`;
  return sql`(SELECT coalesce(json_agg(json_build_object('scope', l.scope, 'failures', l.failures,
      'locked', coalesce(l.locked_until > now(), false),
      'retry_after_s', CASE WHEN l.locked_until > now() THEN ceil(extract(epoch FROM l.locked_until - now()))::int END)),
      '[]'::json)
    FROM signin_lockouts l
    WHERE (l.expires_at > now() OR l.locked_until > now()) AND (l.scope, l.key) IN (${keyList(keys)}))`;
}

/** The user with this email (if any) and the state of the sign-in's keys, in one read. */
export async function readSigninState(
  db: Db,
  email: string,
  keys: readonly SigninKey[],
): Promise<{ user: UserRow | undefined; keys: KeyState[] }> {
  const [row] = await db
    .select({ user: users, keys: sql<unknown>`${keyStatesSql(keys)}` })
    .from(sql`(SELECT 1) AS one`)
    .leftJoin(users, localUserByEmail(email))
    .limit(1);
  return { user: row?.user ?? undefined, keys: fromJson<KeyState[]>(row?.keys ?? []) };
}

/** The state of `keys`, alone (the CLI token exchange, which looks up no user). */
export async function readKeyStates(db: Db, keys: readonly SigninKey[]): Promise<KeyState[]> {
  if (keys.length === 0) return [];
  const [row] = await queryRows(db, sql`SELECT ${keyStatesSql(keys)} AS j`, { j: col.json<KeyState[]>() });
  return row?.j ?? [];
}

const LOCKED_MESSAGES: Record<SigninScope, (seconds: number) => string> = {
  account_source: (s) =>
    `Too many failed sign-ins for this email from your network address: sign-in with it from here is paused for ${s} s (Retry-After). Every attempt from here until then is refused, even with the right password; other addresses are not affected, and an admin can lift the pause.`,
  source: (s) =>
    `Too many failed sign-ins from your network address: sign-in from it is paused for ${s} s (Retry-After). Every attempt until then is refused, even with the right password; an admin can lift the pause.`,
  cli_source: (s) =>
    `Too many failed code exchanges from your network address: they are paused for ${s} s (Retry-After); then sign in again.`,
};

/** 429 too_many_attempts with Retry-After while any of the keys is locked (the longest lock, when several are). */
export function refuseWhileLocked(states: readonly KeyState[]): void {
  const locked = states
    .filter((s) => s.locked)
    .sort((a, b) => Number(b.retry_after_s) - Number(a.retry_after_s))[0];
  if (!locked) return;
  const seconds = Math.max(1, Number(locked.retry_after_s) || 1);
  throw rateLimited('too_many_attempts', LOCKED_MESSAGES[locked.scope](seconds), seconds);
}

/** The per-scope threshold, as an SQL expression of a scope column. */
const maxFailuresSql = (policy: SigninPolicy, scope: SQL) =>
  sql`(CASE ${scope} ${sql.join(
    Object.entries(policy.maxFailures).map(([s, max]) => sql`WHEN ${s}::text THEN ${max}::int`),
    sql` `,
  )} END)`;

/** When the lock of the `failures`-th failure ends (NULL below the threshold); the SQL of lockDurationMs. */
const lockedUntilSql = (policy: SigninPolicy, failures: SQL, max: SQL) =>
  sql`(CASE WHEN ${failures} >= ${max} THEN now() + least(${policy.lockoutMs}::float8 *
      power(2::float8, least(${failures} - ${max}, ${MAX_DOUBLINGS}::int)), ${policy.windowMs}::float8)
      * interval '1 millisecond' END)`;

export interface FailureOutcome {
  scope: SigninScope;
  failures: number;
  /** This failure started a lock (and wrote its audit record). */
  lock_started: boolean;
  locked_until: string | null;
}

/**
 * Counts one failure against each key, in one statement, and writes an audit record (`signin.locked`) for each lock
 * it starts. Race-safe: ON CONFLICT DO UPDATE computes from the row as it is once locked, so concurrent failures
 * each count once; every statement locks the rows in the same order (keys, then the audit chain), so they do not
 * deadlock.
 */
export async function recordSigninFailure(
  db: Db,
  policy: SigninPolicy,
  keys: readonly SigninKey[],
  sourceIp: string,
): Promise<FailureOutcome[]> {
  if (keys.length === 0) return [];
  const window = sql`${policy.windowMs}::float8 * interval '1 millisecond'`;
  const stale = sql`t.expires_at <= now()`;
  const failures = sql`(CASE WHEN ${stale} THEN 1 ELSE t.failures + 1 END)`;
  const max = maxFailuresSql(policy, sql`t.scope`);
  const insertMax = maxFailuresSql(policy, sql`i.scope`);
  const audit = auditInsertFromRowsSql(
    {
      actionType: 'signin.locked',
      actor: { id: '', email: '', ipAddress: sourceIp },
      resourceType: 'signin_lockout',
      resourceId: '',
      level: 'warn',
      metadata: { source_ip: sourceIp },
    },
    {
      actorEmail: sql`CASE WHEN scope = 'account_source' THEN substr(key, strpos(key, ' ') + 1) ELSE '' END`,
      resourceId: sql`id`,
      metadata: {
        scope: { sql: sql`scope`, type: 'text' },
        key: { sql: sql`key`, type: 'text' },
        failures: { sql: sql`failures`, type: 'integer' },
        locked_until: { sql: sql`locked_until_text`, type: 'text' },
        lockout_s: { sql: sql`lockout_s`, type: 'integer' },
      },
    },
    // ORDER BY: the audit rows are inserted once every key's row is locked (a Sort reads all its input first).
    sql`SELECT * FROM up WHERE lock_started ORDER BY scope`,
  );
  return queryRows(
    db,
    sql`WITH up AS (
      INSERT INTO signin_lockouts AS t (scope, key, failures, first_failure_at, last_failure_at, locked_at,
        locked_until, expires_at)
      SELECT i.scope, i.key, 1, now(), now(), CASE WHEN 1 >= ${insertMax} THEN now() END,
        ${lockedUntilSql(policy, sql`1`, insertMax)}, now() + ${window}
      FROM (VALUES ${keyList(keys)}) AS i (scope, key)
      ON CONFLICT (scope, key) DO UPDATE SET
        failures = ${failures},
        first_failure_at = CASE WHEN ${stale} THEN now() ELSE t.first_failure_at END,
        last_failure_at = now(),
        locked_at = CASE WHEN ${failures} >= ${max}
          THEN CASE WHEN t.locked_until > now() THEN t.locked_at ELSE now() END END,
        locked_until = ${lockedUntilSql(policy, failures, max)},
        expires_at = now() + ${window}
      RETURNING t.id::text AS id, t.scope, t.key, t.failures, coalesce(t.locked_at = now(), false) AS lock_started,
        to_char(t.locked_until AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS locked_until_text,
        ceil(extract(epoch FROM t.locked_until - now()))::int AS lockout_s
    ),
    audit AS (${audit} RETURNING 1)
    SELECT scope, failures, lock_started, locked_until_text AS locked_until FROM up`,
    {
      scope: col.oneOf(SIGNIN_SCOPES),
      failures: col.number,
      lock_started: col.bool,
      locked_until: col.nullable(col.text),
    },
  );
}

/** A successful sign-in forgets its account's failures from its address (the address's own stay counted). */
export async function clearAccountFailures(db: Db, keys: readonly SigninKey[]): Promise<void> {
  const pair = keys.find((k) => k.scope === 'account_source');
  if (!pair) return;
  await db
    .delete(signinLockouts)
    .where(and(eq(signinLockouts.scope, 'account_source'), eq(signinLockouts.key, pair.key)));
}

/** Deletes the records whose window has passed and that are not locked (the background probe). */
export async function pruneSigninLockouts(db: Db, now = new Date()): Promise<void> {
  await db
    .delete(signinLockouts)
    .where(
      and(
        lt(signinLockouts.expiresAt, now),
        or(isNull(signinLockouts.lockedUntil), lt(signinLockouts.lockedUntil, now)),
      ),
    );
}

// ---- Admin: the records, and clearing one. ----

const lockedNow = sql<boolean>`coalesce(${signinLockouts.lockedUntil} > now(), false)`;

const viewColumns = {
  id: signinLockouts.id,
  scope: signinLockouts.scope,
  key: signinLockouts.key,
  failures: signinLockouts.failures,
  locked: lockedNow,
  lockedAt: signinLockouts.lockedAt,
  lockedUntil: signinLockouts.lockedUntil,
  retryAfter: sql<
    number | null
  >`CASE WHEN ${signinLockouts.lockedUntil} > now() THEN ceil(extract(epoch FROM ${signinLockouts.lockedUntil} - now()))::int END`,
  firstFailureAt: signinLockouts.firstFailureAt,
  lastFailureAt: signinLockouts.lastFailureAt,
  expiresAt: signinLockouts.expiresAt,
};

type ViewRow = typeof signinLockouts.$inferSelect & { locked: boolean; retryAfter: number | null };

const toView = (row: ViewRow) => ({
  id: row.id,
  scope: row.scope as SigninScope,
  key: row.key,
  ...keyParts(row.scope as SigninScope, row.key),
  failures: Number(row.failures),
  locked: row.locked === true,
  locked_at: row.lockedAt?.toISOString() ?? null,
  locked_until: row.lockedUntil?.toISOString() ?? null,
  retry_after_s: row.retryAfter === null ? null : Number(row.retryAfter),
  first_failure_at: row.firstFailureAt.toISOString(),
  last_failure_at: row.lastFailureAt.toISOString(),
  expires_at: row.expiresAt.toISOString(),
});

/** The keys with failures in their window (or locked), locked ones first (the lock ending last first), then the latest failure. */
export async function listSigninLockouts(db: Db, query: ListSigninLockoutsQuery) {
  const conditions: SQL[] = [
    sql`(${signinLockouts.expiresAt} > now() OR ${signinLockouts.lockedUntil} > now())`,
  ];
  if (query.scope) conditions.push(eq(signinLockouts.scope, query.scope) as SQL);
  if (query.status === 'locked') conditions.push(sql`${signinLockouts.lockedUntil} > now()`);
  if (query.status === 'failing') conditions.push(sql`NOT ${lockedNow}`);
  const where = and(...conditions);
  const rows = await db
    .select(viewColumns)
    .from(signinLockouts)
    .where(where)
    .orderBy(
      desc(lockedNow),
      sql`${signinLockouts.lockedUntil} DESC NULLS LAST`,
      desc(signinLockouts.lastFailureAt),
      desc(signinLockouts.id),
    )
    .limit(query.limit)
    .offset(query.offset);
  const [total] = await db.select({ n: count() }).from(signinLockouts).where(where);
  return {
    lockouts: rows.map(toView),
    total: Number(total?.n ?? 0),
    limit: query.limit,
    offset: query.offset,
  };
}

/** Deletes a record (its failures and any lock), audited as `signin.lockout_cleared` with the admin as actor. */
export async function clearSigninLockout(db: Db, id: string, actor: AuditActor) {
  return db.transaction(async (tx) => {
    const [row] = await tx.delete(signinLockouts).where(eq(signinLockouts.id, id)).returning(viewColumns);
    if (!row) throw notFound('No sign-in lockout with this id (it may have been cleared or pruned).');
    const view = toView(row as ViewRow);
    await recordAudit(tx, {
      actionType: 'signin.lockout_cleared',
      actor,
      resourceType: 'signin_lockout',
      resourceId: view.id,
      metadata: {
        scope: view.scope,
        key: view.key,
        failures: view.failures,
        was_locked: view.locked,
        locked_until: view.locked_until,
      },
    });
    return view;
  });
}
