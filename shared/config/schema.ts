import { z } from 'zod';
import { parseDuration } from './duration.ts';

const duration = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((text, ctx) => {
      const ms = parseDuration(text);
      if (ms === undefined || ms <= 0) {
        ctx.addIssue({ code: 'custom', message: `"${text}" is not a duration like 30s, 15m or 1h30m` });
        return z.NEVER;
      }
      return ms;
    });

const absoluteUrl = z.string().refine(
  (value) => {
    try {
      const url = new URL(value);
      return (url.protocol === 'http:' || url.protocol === 'https:') && url.host.length > 0;
    } catch {
      return false;
    }
  },
  { message: 'must be an absolute http(s) URL with scheme and host, e.g. https://dashboard.example.com' },
);

/**
 * The whole service configuration: every key of the spec's table with its reference value, plus the keys the
 * device protocol and the issues add. Durations are parsed into milliseconds here, once.
 */
export const configSchema = z
  .object({
    env: z.enum(['local', 'prod']).default('local'),
    port: z.coerce.number().int().min(0).max(65535).default(8080),
    version: z.string().default('0.1.0'),
    dashboard_url: absoluteUrl.optional(),
    db: z
      .object({
        dsn: z.string().default(''),
        max_open_conns: z.number().int().positive().default(25),
        max_idle_conns: z.number().int().nonnegative().default(25),
        max_idle_time: duration('15m'),
        statement_timeout: duration('20s'),
      })
      .strict()
      .prefault({}),
    cors: z
      .object({ allowed_origins: z.array(z.string()).default([]) })
      .strict()
      .prefault({}),
    auth: z
      .object({
        provider: z.enum(['local', 'idp']).default('local'),
        jwt_secret: z.string().default(''),
        jwt_issuer: z.string().default('agent-control-plane'),
        jwt_audience: z.string().default('agent-control-plane'),
        token_ttl: duration('1h'),
        idp_domain: z.string().default(''),
        idp_audience: z.string().default(''),
        idp_roles_claim: z.string().default('roles'),
        idp_bypass: z.boolean().default(false),
      })
      .strict()
      .prefault({}),
    health: z
      .object({ probe_interval: duration('30m') })
      .strict()
      .prefault({}),
    device: z
      .object({ max_clock_skew: duration('5m'), online_threshold: duration('15m') })
      .strict()
      .prefault({}),
    events: z
      .object({
        max_batch: z.number().int().positive().max(10_000).default(1000),
        prompt_max_chars: z.number().int().positive().default(4096),
      })
      .strict()
      .prefault({}),
    bootstrap: z
      .object({ admin_email: z.string().default(''), admin_password: z.string().default('') })
      .strict()
      .prefault({}),
  })
  .strict()
  .superRefine((cfg, ctx) => {
    if (cfg.auth.provider === 'local' && Buffer.byteLength(cfg.auth.jwt_secret, 'utf8') < 32) {
      ctx.addIssue({
        code: 'custom',
        path: ['auth', 'jwt_secret'],
        message:
          'must be at least 32 bytes when auth.provider = "local" (set it in the file or SVC_JWT_SECRET)',
      });
    }
    if (
      cfg.dashboard_url &&
      cfg.auth.provider !== 'local' &&
      Buffer.byteLength(cfg.auth.jwt_secret, 'utf8') < 32
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['auth', 'jwt_secret'],
        message:
          'must be at least 32 bytes when dashboard_url is set: it signs the tokens of the CLI sign-in',
      });
    }
    if (
      cfg.auth.provider === 'idp' &&
      !cfg.auth.idp_bypass &&
      (!cfg.auth.idp_domain || !cfg.auth.idp_audience)
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['auth', 'idp_domain'],
        message: 'auth.idp_domain and auth.idp_audience are required when auth.provider = "idp"',
      });
    }
    if (cfg.auth.idp_bypass && cfg.env === 'prod') {
      ctx.addIssue({
        code: 'custom',
        path: ['auth', 'idp_bypass'],
        message: 'is for local development only and is refused when env = "prod"',
      });
    }
  });

export type Config = z.output<typeof configSchema>;
export type ConfigInput = z.input<typeof configSchema>;
