import * as z from 'zod';
import { isCommittedSecret } from './committed-secrets.ts';
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
 * Where a store of objects outside the database is (shared/core/object-store/): "none", "dir" (files under dir) or
 * "s3" (bucket, or the bucket the stack creates), under a key prefix; endpoint is an S3-compatible server (s3rver
 * locally), empty for AWS S3 of the region.
 */
const objectStore = (prefix: string) => ({
  target: z.enum(['none', 'dir', 's3']).default('none'),
  dir: z.string().default(''),
  bucket: z.string().default(''),
  prefix: z
    .string()
    .regex(
      /^([A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*)?$/,
      'must be key segments like "archive" or "a/b", without slashes at either end',
    )
    .default(prefix),
  endpoint: z.union([absoluteUrl, z.literal('')]).default(''),
  region: z.string().default(''),
});

/** The config keys holding a secret that signs or authenticates: refused when the value was committed. */
const SECRET_KEYS = [
  'auth.jwt_secret',
  'audit.ingest_token',
  'envsvc.token',
  'alerts.webhook_secret',
] as const;
const secretAt = (
  cfg: {
    auth: { jwt_secret: string };
    audit: { ingest_token: string };
    envsvc: { token: string };
    alerts: { webhook_secret: string };
  },
  key: (typeof SECRET_KEYS)[number],
): string =>
  ({
    'auth.jwt_secret': cfg.auth.jwt_secret,
    'audit.ingest_token': cfg.audit.ingest_token,
    'envsvc.token': cfg.envsvc.token,
    'alerts.webhook_secret': cfg.alerts.webhook_secret,
  })[key];

/** The service version the OpenAPI document and /meta report when `version` is not configured. */
export const DEFAULT_VERSION = '0.1.0';

/**
 * The whole service configuration: every key of the spec's table with its reference value, plus the keys the
 * device protocol and the issues add. Durations are parsed into milliseconds here, once.
 */
export const configSchema = z
  .object({
    env: z.enum(['local', 'prod']).default('local'),
    port: z.coerce.number().int().min(0).max(65535).default(8080),
    /** Interface the local server listens on (npm start); Lambda ignores it. */
    host: z.string().min(1).default('127.0.0.1'),
    version: z.string().default(DEFAULT_VERSION),
    // npm start's own directory (SVC_DATA_DIR): the JWT secret it generates when none is configured (file
    // jwt-secret, owner-only). Lambda never reads it.
    data_dir: z.string().min(1).default('./.data'),
    dashboard_url: absoluteUrl.optional(),
    db: z
      .object({
        dsn: z.string().default(''),
        max_open_conns: z.number().int().positive().default(25),
        max_idle_conns: z.number().int().nonnegative().default(25),
        max_idle_time: duration('15m'),
        statement_timeout: duration('20s'),
        // RDS Data API: how long a call keeps being retried while Aurora resumes from auto-pause (about 15 s).
        resume_wait: duration('20s'),
        // npm start on PostgreSQL: migrate as the DSN's user (the owner), then serve as <database>_service.
        service_role: z.boolean().default(true),
      })
      .strict()
      .prefault({}),
    cors: z
      .object({ allowed_origins: z.array(z.string()).default([]) })
      .strict()
      .prefault({}),
    // The least severe level written to the log (stdout; CloudWatch in Lambda).
    log: z
      .object({ level: z.enum(['debug', 'info', 'warn', 'error']).default('info') })
      .strict()
      .prefault({}),
    auth: z
      .object({
        provider: z.enum(['local', 'idp']).default('local'),
        jwt_secret: z.string().default(''),
        jwt_issuer: z.string().default('agent-control-plane'),
        jwt_audience: z.string().default('agent-control-plane'),
        // The lifetime of the tokens this service signs: verification refuses one whose exp lies further past its
        // iat, so a token cannot outlive this however it was made.
        token_ttl: duration('1h'),
        // How far ahead of this clock a token's iat may be (the signer's clock running fast); beyond, it is refused.
        token_clock_skew: duration('60s'),
        idp_domain: z.string().default(''),
        idp_audience: z.string().default(''),
        idp_roles_claim: z.string().default('roles'),
        // The admin console signs in through the IdP (OIDC authorization code with PKCE) as this public client: no
        // secret, its redirect URI <console>/callback (docs/identity-provider.md). Empty: the console cannot sign in
        // while auth.provider = "idp" (the API still accepts the IdP's tokens).
        idp_client_id: z
          .string()
          .regex(/^[\x21-\x7e]*$/, 'must be the client ID the IdP gave the console (printable, no spaces)')
          .default(''),
        // The scopes the console asks for, space-separated: "openid" and whatever makes the IdP put the email and the
        // roles claim (idp_roles_claim) in the token the API gets.
        idp_scopes: z
          .string()
          .default('openid profile email')
          .refine((scopes) => scopes.split(/\s+/).includes('openid'), {
            message: 'must include "openid" (space-separated scopes, e.g. "openid profile email")',
          }),
        idp_bypass: z.boolean().default(false),
        // Sign-in throttling (shared/identity/lockouts.ts): after this many failed sign-ins of one account
        // (the email given, whether or not the user exists) from one source address within the failure window, that
        // account is locked for that address for signin_lockout, doubling with each further failure, at most the
        // window. Other addresses still sign in to it: a guesser elsewhere cannot lock its owner out.
        signin_max_failures: z.number().int().positive().max(1000).default(5),
        // The same per source address, whatever the accounts (and per source address at the CLI token exchange):
        // higher, since offices share addresses.
        signin_max_failures_per_source: z.number().int().positive().max(100_000).default(20),
        // Failures count until a whole window passes without one.
        signin_failure_window: duration('15m'),
        signin_lockout: duration('30s'),
        // CLI sign-ins an address may start (GET /v1/auth/cli/authorize) while they are open (10 minutes each):
        // past it, 429 too_many_requests with Retry-After until the oldest one ends.
        cli_authorize_max_per_source: z.number().int().positive().max(100_000).default(60),
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
        // Bounded so that a full batch of stored prompts stays far below the Data API's 4 MiB request.
        prompt_max_chars: z.number().int().positive().max(65_536).default(4096),
        // How often the stored events are folded into the observability rollups (admin reads add the rest, never fold).
        fold_interval: duration('1m'),
        // How often the partition maintenance runs (shared/observability/partitions/maintenance.ts): daily partitions of
        // the events are created partitions_ahead days ahead.
        maintenance_interval: duration('1h'),
        partitions_ahead: z.number().int().min(1).max(60).default(7),
        // Event partitions wholly older than this are dropped by the maintenance (never a row DELETE); the rollups
        // and series keep rollup_retention, so summaries of older ranges still answer.
        retention: duration('90d'),
        rollup_retention: duration('400d'),
        // The archive of closed hours of events as Parquet (shared/observability/archive/archive.ts, functions/observability/
        // archive.ts): "none" (no archive; retention drops partitions unarchived), "dir" (files under dir) or "s3"
        // (bucket, or the bucket the stack creates, passed as SVC_ARCHIVE_BUCKET). With an archive, retention never
        // drops a day that is not archived whole.
        archive: z
          .object({
            // Key prefix of every object: <prefix>/events/dt=YYYY-MM-DD/hour=HH/... ("" for none).
            ...objectStore('archive'),
            interval: duration('10m'),
            // An hour is closed, hence archived, once this long has passed since its end.
            delay: duration('1h'),
            max_hours_per_run: z.number().int().positive().max(1000).default(6),
          })
          .strict()
          .prefault({}),
      })
      .strict()
      .prefault({}),
    bootstrap: z
      .object({ admin_email: z.string().default(''), admin_password: z.string().default('') })
      .strict()
      .prefault({}),
    /** Where request environments live: `builtin` (the service's own PostgreSQL) or an external `http` service. */
    envsvc: z
      .object({
        provider: z.enum(['builtin', 'http']).default('builtin'),
        url: z.union([absoluteUrl, z.literal('')]).default(''),
        // Production reads it from Secrets Manager (SVC_ENVSVC_TOKEN_ARN); never put it in a committed file.
        token: z.string().default(''),
        timeout: duration('10s'),
      })
      .strict()
      .prefault({}),
    /** The SQL query proxy (POST /v1/requests/{id}/query). */
    query: z
      .object({
        statement_timeout: duration('5s'),
        max_rows: z.number().int().positive().max(100_000).default(1000),
        max_bytes: z
          .number()
          .int()
          .positive()
          .max(1024 * 1024)
          .default(1024 * 1024),
      })
      .strict()
      .prefault({}),
    /** Data-access requests. */
    requests: z
      .object({
        default_validity: duration('30d'),
        max_validity: duration('90d'),
        usage_events_in_view: z.number().int().nonnegative().max(1000).default(100),
        expiry_interval: duration('1m'),
      })
      .strict()
      .prefault({}),
    /** Fleet alerts (docs/policy.md, "Alerts"): how they are derived and delivered. */
    alerts: z
      .object({
        // How often the alert pass runs (the alerts/derive schedule): inventory changes, then the denied-call spike.
        interval: duration('1m'),
        // Inventory rows are derived once they are this old, so that a report still committing is never skipped: it
        // must be longer than db.statement_timeout plus the clock skew between functions and the database.
        settle: duration('1m'),
        // Inventory rows one pass derives at most (in batches of 1,000, one transaction each); the rest wait.
        max_rows: z.number().int().positive().max(1_000_000).default(50_000),
        // A spike: the denied calls of the last `window` are at least min_denied and at least `factor` times the
        // average per window of the `baseline` before it.
        spike: z
          .object({
            window: duration('15m'),
            baseline: duration('24h'),
            factor: z.number().min(1).max(1000).default(3),
            min_denied: z.number().int().min(1).default(20),
          })
          .strict()
          .prefault({}),
        // Signed webhook destinations: each new alert is posted to every one (format "slack": a Slack-compatible
        // {text, blocks} payload).
        webhooks: z
          .array(
            z
              .object({
                name: z
                  .string()
                  .regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'must be a short lowercase name')
                  .refine((name) => name !== 'eventbridge', 'is the name of the EventBridge delivery'),
                url: absoluteUrl,
                format: z.enum(['json', 'slack']).default('json'),
              })
              .strict(),
          )
          .max(20)
          .default([]),
        // Each new alert as an EventBridge event (detail type "Fleet Alert Opened", docs/policy.md): `bus` is the
        // event bus name or ARN (the stack passes its own as SVC_ALERTS_EVENT_BUS); empty: none. `endpoint` is a
        // local EventBridge-compatible endpoint (tests); empty: the region's.
        eventbridge: z
          .object({
            bus: z.string().default(''),
            endpoint: z.union([absoluteUrl, z.literal('')]).default(''),
            region: z.string().default(''),
          })
          .strict()
          .prefault({}),
        // The HMAC-SHA256 key of the webhook signatures. Production reads it from Secrets Manager
        // (SVC_ALERTS_WEBHOOK_SECRET_ARN); never put it in a committed file.
        webhook_secret: z.string().default(''),
        delivery: z
          .object({
            // A delivery that failed this many times is dead (the dead-letter list).
            max_attempts: z.number().int().min(1).max(50).default(8),
            // The wait after the first failure, doubled after each next one, up to max_backoff.
            backoff: duration('30s'),
            max_backoff: duration('1h'),
            timeout: duration('10s'),
          })
          .strict()
          .prefault({}),
      })
      .strict()
      .prefault({}),
    /** The audit log. */
    audit: z
      .object({
        // The log shipper's bearer token for POST /v1/admin/audit-logs (that route only), so that the shipper needs
        // no admin account. Empty: only admins ingest. Production reads it from Secrets Manager
        // (SVC_AUDIT_INGEST_TOKEN_ARN); never put it in a committed file.
        ingest_token: z.string().default(''),
        // Anchors of the chain's head outside the database (shared/audit/anchors/, functions/audit/anchor.ts): every
        // interval the head (seq, hash, count) is signed and written under <prefix>/anchors/. In AWS the stack's
        // bucket (Object Lock, compliance mode) and KMS key, passed as SVC_AUDIT_ANCHOR_BUCKET and
        // SVC_AUDIT_ANCHOR_KMS_KEY.
        anchors: z
          .object({
            ...objectStore('audit'),
            interval: duration('1h'),
            // The asymmetric key (ECDSA P-256) that signs each anchor: a KMS key id or ARN, or else a PKCS#8 PEM file,
            // generated on first use (empty: <data_dir>/audit-anchor-key.pem). Never a committed file.
            kms_key_id: z.string().default(''),
            key_file: z.string().default(''),
            // Object Lock retention (compliance mode) of every object in the stack's bucket, in days: none can be
            // changed or deleted before, by anyone, the account's root included.
            retention_days: z.number().int().positive().max(36_500).default(2557),
          })
          .strict()
          .prefault({}),
      })
      .strict()
      .prefault({}),
    /** Export destinations (docs/exports.md): how the exports/deliver schedule streams stored events to them. */
    exports: z
      .object({
        // How often the delivery pass runs (whole minutes: EventBridge's least rate), and how long one pass may
        // spend (it stops between batches).
        interval: duration('1m'),
        time_budget: duration('20s'),
        // Events read, mapped and sent per request.
        batch: z.number().int().min(1).max(10_000).default(1000),
        // The wait after the first failure, doubled (with jitter) after each next one, up to max_backoff; a
        // Retry-After the receiver gives wins, up to max_backoff.
        backoff: duration('5s'),
        max_backoff: duration('10m'),
        timeout: duration('10s'),
        // Where a destination's secret_ref is looked up: `config` (the `secrets` table below, local runs) or
        // `secretsmanager` (the secret named secret_prefix + secret_ref, which the stack sets).
        secret_store: z.enum(['config', 'secretsmanager']).default('config'),
        secret_prefix: z.string().default(''),
        // An S3-compatible server the security_lake destinations write to instead of AWS S3 (s3rver locally and in
        // the tests); empty: S3 of each destination's Region. An operator's setting, not a destination's: the
        // writes are signed with the deliver function's own credentials, so an admin must not choose their host.
        security_lake_endpoint: z.union([absoluteUrl, z.literal('')]).default(''),
        // Local runs only: secret_ref → value (HEC token, webhook key, OTLP headers as JSON). Never committed.
        secrets: z.record(z.string(), z.string()).default({}),
      })
      .strict()
      .prefault({}),
  })
  .strict()
  .superRefine((cfg, ctx) => {
    const secretBytes = Buffer.byteLength(cfg.auth.jwt_secret, 'utf8');
    if (secretBytes > 0 && secretBytes < 32) {
      ctx.addIssue({
        code: 'custom',
        path: ['auth', 'jwt_secret'],
        message: 'must be at least 32 bytes (or unset locally: npm start generates one)',
      });
    }
    if (
      secretBytes === 0 &&
      cfg.env === 'prod' &&
      (cfg.auth.provider === 'local' || cfg.dashboard_url !== undefined)
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['auth', 'jwt_secret'],
        message:
          'is required when env = "prod" and auth.provider = "local" or dashboard_url is set (it signs the local and CLI sign-in tokens): the stack reads it from Secrets Manager (SVC_JWT_SECRET_ARN); only npm start (env = "local") generates one',
      });
    }
    for (const key of SECRET_KEYS) {
      const value = secretAt(cfg, key);
      if (value && isCommittedSecret(value)) {
        ctx.addIssue({
          code: 'custom',
          path: key.split('.'),
          message:
            'is a value committed to this repository (public, so it proves nothing): use a secret of your own, e.g. `openssl rand -base64 32`',
        });
      }
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
    if (cfg.auth.signin_lockout > cfg.auth.signin_failure_window) {
      ctx.addIssue({
        code: 'custom',
        path: ['auth', 'signin_lockout'],
        message: 'must not be longer than auth.signin_failure_window (a lock never outlasts the window)',
      });
    }
    if (cfg.audit.ingest_token !== '' && Buffer.byteLength(cfg.audit.ingest_token, 'utf8') < 32) {
      ctx.addIssue({
        code: 'custom',
        path: ['audit', 'ingest_token'],
        message: 'must be at least 32 bytes (or empty: only admins ingest audit records)',
      });
    }
    if (cfg.envsvc.provider === 'http' && !cfg.envsvc.url) {
      ctx.addIssue({
        code: 'custom',
        path: ['envsvc', 'url'],
        message: 'is required when envsvc.provider = "http" (the base URL of the environment service)',
      });
    }
    if (cfg.query.statement_timeout >= cfg.db.statement_timeout) {
      ctx.addIssue({
        code: 'custom',
        path: ['query', 'statement_timeout'],
        message: "must be shorter than db.statement_timeout (and API Gateway's 30 s)",
      });
    }
    if (cfg.requests.default_validity > cfg.requests.max_validity) {
      ctx.addIssue({
        code: 'custom',
        path: ['requests', 'default_validity'],
        message: 'must not be longer than requests.max_validity',
      });
    }
    if (cfg.audit.anchors.target === 'dir' && !cfg.audit.anchors.dir) {
      ctx.addIssue({
        code: 'custom',
        path: ['audit', 'anchors', 'dir'],
        message: 'is required when audit.anchors.target = "dir" (the directory the anchors are written to)',
      });
    }
    if (cfg.events.archive.target === 'dir' && !cfg.events.archive.dir) {
      ctx.addIssue({
        code: 'custom',
        path: ['events', 'archive', 'dir'],
        message: 'is required when events.archive.target = "dir" (the directory the archive is written to)',
      });
    }
    if (cfg.alerts.settle <= cfg.db.statement_timeout) {
      ctx.addIssue({
        code: 'custom',
        path: ['alerts', 'settle'],
        message:
          'must be longer than db.statement_timeout (an inventory report may commit that long after its time)',
      });
    }
    if (cfg.alerts.webhooks.length > 0 && Buffer.byteLength(cfg.alerts.webhook_secret, 'utf8') < 32) {
      ctx.addIssue({
        code: 'custom',
        path: ['alerts', 'webhook_secret'],
        message: 'must be at least 32 bytes when alerts.webhooks are configured (it signs every delivery)',
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
