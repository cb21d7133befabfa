import * as z from 'zod';
import { nullAsAbsent } from './input-rules.ts';

const base64url = (min: number, max: number) =>
  z
    .string()
    .min(min)
    .max(max)
    .regex(/^[A-Za-z0-9_-]+$/, { message: 'must be base64url' });

export const cliAuthorizeQuery = z.object({
  redirect_uri: z.string().min(1).max(512),
  state: z.string().min(1).max(512),
  // RFC 7636: the S256 challenge is BASE64URL(SHA256(verifier)) = 43 characters.
  code_challenge: base64url(43, 128),
  code_challenge_method: z.literal('S256', { message: 'only S256 is supported (RFC 7636)' }),
});

export const cliApproveBody = nullAsAbsent(
  z.object({
    request: z.uuid({ message: 'must be the request id from the login URL' }),
  }),
);
export const cliApproveView = z.object({ redirect_to: z.string() });

export const cliTokenBody = nullAsAbsent(
  z.object({
    code: z.string().min(1).max(256),
    // RFC 7636 section 4.1: 43..128 characters of [A-Z a-z 0-9 - . _ ~].
    code_verifier: z
      .string()
      .min(43)
      .max(128)
      .regex(/^[A-Za-z0-9._~-]+$/, { message: 'must be 43-128 unreserved characters (RFC 7636)' }),
    redirect_uri: z.string().min(1).max(512),
  }),
);
