import * as z from 'zod';
import { envelope, isoTimestamp } from '../core/schemas/common.ts';
import { nullAsAbsent } from '../core/schemas/input-rules.ts';

const base64url = (min: number, max: number) =>
  z
    .string()
    .min(min)
    .max(max)
    .regex(/^[A-Za-z0-9_-]+$/, { message: 'must be base64url' });

/** The longest client_id an agent may send: a name a person reads on the approval page, not a document. */
export const CLIENT_ID_MAX = 64;

export const cliAuthorizeQuery = z.object({
  // RFC 6749 section 4.1.1 requires client_id; its characters are VSCHAR (appendix A.1: printable ASCII). There is no
  // client registration (RFC 8252 native clients are public), so it is the agent's own name for itself, shown to the
  // person who decides; spaces only between other characters, so that no two shown names look alike.
  client_id: z
    .string()
    .min(1)
    .max(CLIENT_ID_MAX)
    .regex(/^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/, {
      message: 'must be printable ASCII (spaces only between other characters), e.g. acp-agent-cli',
    })
    .meta({
      description:
        "The agent's name for itself (RFC 6749 section 4.1.1), shown to the person who approves or refuses: 1-64 printable ASCII characters, e.g. acp-agent-cli",
    }),
  redirect_uri: z.string().min(1).max(512),
  state: z.string().min(1).max(512),
  // RFC 7636: the S256 challenge is BASE64URL(SHA256(verifier)) = 43 characters.
  code_challenge: base64url(43, 128),
  code_challenge_method: z.literal('S256', { message: 'only S256 is supported (RFC 7636)' }),
});

/** The status of a sign-in: pending until a person approves or refuses it; used once the agent has its token. */
export const CLI_SIGNIN_STATUSES = ['pending', 'approved', 'refused', 'used'] as const;

/** A sign-in as the person deciding on it reads it (GET /v1/auth/cli/requests/{id}). */
export const cliSigninView = z
  .object({
    id: z.string().meta({ format: 'uuid' }),
    client_id: z
      .string()
      .meta({ description: 'What the agent calls itself (not verified: there is no registration)' }),
    redirect_uri: z.string().meta({ description: 'Where the browser goes back to the agent' }),
    loopback_address: z.string().meta({
      description: "host:port of redirect_uri, the agent's loopback listener (e.g. 127.0.0.1:53682)",
    }),
    status: z.enum(CLI_SIGNIN_STATUSES).meta({
      description:
        'pending: waiting for a decision; approved: the code was handed out; refused: a person refused it; used: the agent has exchanged its code',
    }),
    created_at: isoTimestamp,
    expires_at: isoTimestamp,
    source_ip: z.string().nullable().meta({
      description:
        'Address of the browser that opened authorize (the agent opens it on its own computer); null when not recorded',
    }),
    user_agent: z.string().nullable().meta({
      description: 'User-Agent of that browser (at most 256 characters); null when it sent none',
    }),
  })
  .meta({ id: 'CliSignin' });
export const cliSigninResponse = envelope(cliSigninView);

/** The body of approve and refuse: the sign-in, by the id of the login URL. */
export const cliDecisionBody = nullAsAbsent(
  z.object({
    request: z.uuid({ message: 'must be the request id from the login URL' }),
  }),
);
/** Where the dashboard sends the browser next: the agent's loopback redirect with a code, or with error=access_denied. */
export const cliDecisionView = z.object({ redirect_to: z.string() });

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
