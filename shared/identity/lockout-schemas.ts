import * as z from 'zod';
import { envelope, isoTimestamp, pageEnvelope, pagination } from '../core/schemas/common.ts';

/** What failed sign-ins are counted by (shared/identity/lockouts.ts). */
export const SIGNIN_SCOPES = ['account_source', 'source', 'cli_source'] as const;
export type SigninScope = (typeof SIGNIN_SCOPES)[number];

export const signinLockoutView = z
  .object({
    id: z.uuid(),
    scope: z.enum(SIGNIN_SCOPES).meta({
      description:
        'account_source: an account from one source address at POST /v1/auth/login (the lower-cased email given, whether or not such a user exists; its lock refuses that account from that address only); source: the source address there, whatever the accounts (IPv4, or the /64 of an IPv6 address); cli_source: the source address at POST /v1/auth/cli/token',
    }),
    key: z.string().meta({
      description: 'What is counted: the address, or for account_source the address, a space and the email',
    }),
    account: z
      .string()
      .nullable()
      .meta({ description: 'The email (account_source); null for the other scopes' }),
    source: z
      .string()
      .nullable()
      .meta({ description: 'The address (IPv4, or an IPv6 /64); null when the service did not know it' }),
    failures: z.number().int().meta({ description: 'Failed attempts in the current window' }),
    locked: z.boolean().meta({ description: 'Sign-in for this key is refused now (429 too_many_attempts)' }),
    locked_at: isoTimestamp.nullable().meta({ description: 'When the current or last lock started' }),
    locked_until: isoTimestamp.nullable(),
    retry_after_s: z.number().int().nullable().meta({
      description: 'Seconds until the lock ends (the Retry-After of its 429); null when not locked',
    }),
    first_failure_at: isoTimestamp,
    last_failure_at: isoTimestamp,
    expires_at: isoTimestamp.meta({
      description:
        'The last failure plus auth.signin_failure_window: the failures stop counting then, and the probe deletes the record',
    }),
  })
  .meta({ id: 'SigninLockout' });

export const listSigninLockoutsQuery = z
  .object({
    scope: z.enum(SIGNIN_SCOPES).optional(),
    status: z
      .enum(['locked', 'failing'])
      .optional()
      .meta({ description: 'locked: refused now; failing: failures counted, not locked' }),
    ...pagination,
  })
  .strict();
export type ListSigninLockoutsQuery = z.output<typeof listSigninLockoutsQuery>;

export const signinLockoutListResponse = pageEnvelope('lockouts', signinLockoutView);
export const signinLockoutResponse = envelope(signinLockoutView);
