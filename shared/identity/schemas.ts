import * as z from 'zod';
import { ROLES } from '../core/auth/principal.ts';
import { envelope, isoTimestamp, pageEnvelope, pagination } from '../core/schemas/common.ts';
import { nullAsAbsent } from '../core/schemas/input-rules.ts';

export const role = z.enum(ROLES);

export const userView = z
  .object({
    id: z.string(),
    email: z.string(),
    name: z.string(),
    roles: z.array(role),
    created_at: isoTimestamp,
    updated_at: isoTimestamp,
  })
  .meta({ id: 'User' });

export const loginBody = nullAsAbsent(
  z.object({
    email: z.string().min(1).max(320),
    password: z.string().min(1).max(1024),
  }),
);

export const tokenView = z.object({
  access_token: z.string(),
  token_type: z.literal('Bearer'),
  expires_in: z.number().int(),
});

export const loginResponse = envelope(tokenView.extend({ user: userView }));

export const createUserBody = nullAsAbsent(
  z
    .object({
      email: z.email({ message: 'must be an email address' }).max(320),
      name: z.string().max(200).default(''),
      password: z.string().min(12, { message: 'must be at least 12 characters' }).max(1024),
      // Bounded before its items are read: each role at most once.
      roles: z
        .array(role)
        .min(1)
        .max(ROLES.length, { message: `must hold each of ${ROLES.join(', ')} at most once` })
        .refine((roles) => new Set(roles).size === roles.length, {
          message: `must hold each of ${ROLES.join(', ')} at most once`,
        })
        .default(['user']),
    })
    .strict(),
);

export const listUsersQuery = z.object({ ...pagination });
export const userListResponse = pageEnvelope('users', userView);

export const meView = z.object({
  subject: z.string(),
  email: z.string(),
  name: z.string(),
  roles: z.array(role),
  token_use: z.enum(['session', 'cli']),
});
