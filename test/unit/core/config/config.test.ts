import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import { parseDuration } from '#shared/core/config/duration.ts';
import {
  COMMAND_LINE_OPTIONS,
  ConfigError,
  ENVIRONMENT_OVERRIDES,
  loadConfig,
} from '#shared/core/config/load.ts';
import { randomSecret } from '#test/support/secrets.ts';

const SECRET = randomSecret();
const dir = mkdtempSync(join(tmpdir(), 'acp-config-'));
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

test('the reference values of the spec are the defaults', () => {
  const cfg = loadConfig({ argv: ['--config', file('min.toml', `[auth]\njwt_secret = "${SECRET}"\n`)] });
  assert.equal(cfg.env, 'local');
  assert.equal(cfg.port, 8080);
  assert.equal(cfg.db.max_open_conns, 25);
  assert.equal(cfg.db.max_idle_conns, 25);
  assert.equal(cfg.db.max_idle_time, 15 * 60_000);
  assert.equal(cfg.auth.provider, 'local');
  assert.equal(cfg.auth.idp_bypass, false);
  assert.equal(cfg.health.probe_interval, 30 * 60_000);
  assert.equal(cfg.device.max_clock_skew, 5 * 60_000);
  assert.equal(cfg.dashboard_url, undefined);
  assert.equal(cfg.auth.signin_max_failures, 5);
  assert.equal(cfg.auth.signin_max_failures_per_source, 20);
  assert.equal(cfg.auth.signin_failure_window, 15 * 60_000);
  assert.equal(cfg.auth.signin_lockout, 30_000);
});

test('the shipped config/local.toml is valid', () => {
  const cfg = loadConfig({ argv: ['--config', 'config/local.toml'] });
  assert.equal(cfg.port, 8080);
});

test('environment overrides and command-line options win over the file', () => {
  const path = file(
    'base.toml',
    `port = 1000\n[db]\ndsn = "pglite:memory"\n[auth]\njwt_secret = "${SECRET}"\n`,
  );
  const fromEnvironment = randomSecret();
  const cfg = loadConfig({
    argv: ['--dashboard-url', 'https://dash.example.com', '--port=9001'],
    env: {
      SVC_CONFIG: path,
      SVC_DB_DSN: 'postgres://u@h/db',
      SVC_JWT_SECRET: fromEnvironment,
      IDP_DOMAIN: 'tenant.example.com',
      IDP_AUDIENCE: 'api://acp',
      IDP_CLIENT_ID: 'console-client',
      SVC_DASHBOARD_URL: 'https://ignored.example.com',
    },
  });
  assert.equal(cfg.db.dsn, 'postgres://u@h/db');
  assert.equal(cfg.auth.jwt_secret, fromEnvironment);
  assert.equal(cfg.auth.idp_domain, 'tenant.example.com');
  assert.equal(cfg.auth.idp_audience, 'api://acp');
  assert.equal(cfg.auth.idp_client_id, 'console-client');
  assert.equal(cfg.auth.idp_scopes, 'openid profile email');
  assert.equal(cfg.dashboard_url, 'https://dash.example.com');
  assert.equal(cfg.port, 9001);
  assert.equal(loadConfig({ env: { SVC_CONFIG: path, PORT: '7007' } }).port, 7007);
  assert.equal(loadConfig({ env: { SVC_CONFIG: path } }).host, '127.0.0.1');
  assert.equal(loadConfig({ env: { SVC_CONFIG: path, HOST: '0.0.0.0' } }).host, '0.0.0.0');
  assert.equal(
    loadConfig({ argv: ['--host', '::1'], env: { SVC_CONFIG: path, HOST: '0.0.0.0' } }).host,
    '::1',
  );
  assert.equal(
    loadConfig({ env: { SVC_CONFIG: path, SVC_DASHBOARD_URL: 'http://localhost:3000' } }).dashboard_url,
    'http://localhost:3000',
  );
});

const refusals: Array<[string, string, Record<string, string>, RegExp]> = [
  ['a jwt secret under 32 bytes', `[auth]\njwt_secret = "short"\n`, {}, /auth\.jwt_secret/],
  ['no jwt secret with env = prod', `env = "prod"\n`, {}, /auth\.jwt_secret: is required when env = "prod"/],
  [
    'no jwt secret with env = prod, an IdP and the CLI sign-in',
    `env = "prod"\ndashboard_url = "https://d.example.com"\n[auth]\nprovider = "idp"\nidp_domain = "t.example.com"\nidp_audience = "c"\n`,
    {},
    /auth\.jwt_secret: is required/,
  ],
  [
    'the JWT secret config/local.toml once carried',
    `[auth]\njwt_secret = "local-development-secret-change-me-0123456789"\n`,
    {},
    /auth\.jwt_secret: is a value committed to this repository/,
  ],
  [
    'a committed JWT secret given in the environment',
    '',
    { SVC_JWT_SECRET: 'local-development-secret-change-me-0123456789' },
    /auth\.jwt_secret: is a value committed/,
  ],
  [
    "the log shipper's token the README once showed",
    '',
    { SVC_AUDIT_INGEST_TOKEN: 'local-log-shipper-token-0123456789abcdef' },
    /audit\.ingest_token: is a value committed/,
  ],
  [
    "the environment service's token of the sam local file",
    `[envsvc]\ntoken = "local-envsvc-token"\n`,
    {},
    /envsvc\.token: is a value committed/,
  ],
  [
    'a dashboard URL without scheme',
    `[auth]\njwt_secret = "${SECRET}"\n`,
    { SVC_DASHBOARD_URL: 'dash.example.com' },
    /dashboard_url/,
  ],
  [
    'a dashboard URL that is relative',
    `[auth]\njwt_secret = "${SECRET}"\n`,
    { SVC_DASHBOARD_URL: '/login' },
    /dashboard_url/,
  ],
  ['an unknown env', `env = "staging"\n[auth]\njwt_secret = "${SECRET}"\n`, {}, /env/],
  ['an unknown auth.provider', `[auth]\nprovider = "ldap"\njwt_secret = "${SECRET}"\n`, {}, /auth\.provider/],
  [
    'a bad duration',
    `[auth]\njwt_secret = "${SECRET}"\n[health]\nprobe_interval = "30 minutes"\n`,
    {},
    /health\.probe_interval/,
  ],
  [
    'a bad idle time',
    `[auth]\njwt_secret = "${SECRET}"\n[db]\nmax_idle_time = "forever"\n`,
    {},
    /db\.max_idle_time/,
  ],
  [
    'idp_bypass with env = prod',
    `env = "prod"\n[auth]\nprovider = "idp"\nidp_bypass = true\n`,
    {},
    /auth\.idp_bypass/,
  ],
  ['an unknown key', `[auth]\njwt_secret = "${SECRET}"\ncolour = "blue"\n`, {}, /colour/],
  ['idp without domain', `[auth]\nprovider = "idp"\n`, {}, /auth\.idp_domain/],
  [
    "the console's IdP scopes without openid",
    `[auth]\nprovider = "idp"\nidp_domain = "t.example.com"\nidp_audience = "c"\nidp_client_id = "c"\nidp_scopes = "profile email"\n`,
    {},
    /auth\.idp_scopes.*openid/,
  ],
  [
    'a console client ID with a space',
    `[auth]\nprovider = "idp"\nidp_domain = "t.example.com"\nidp_audience = "c"\nidp_client_id = "my console"\n`,
    {},
    /auth\.idp_client_id/,
  ],
  [
    'the http environment service without a URL',
    `[auth]\njwt_secret = "${SECRET}"\n[envsvc]\nprovider = "http"\n`,
    {},
    /envsvc\.url/,
  ],
  [
    'an environment service URL that is not absolute',
    `[auth]\njwt_secret = "${SECRET}"\n[envsvc]\nprovider = "http"\nurl = "envsvc.internal"\n`,
    {},
    /envsvc\.url/,
  ],
  [
    'a query timeout not under the statement timeout',
    `[auth]\njwt_secret = "${SECRET}"\n[db]\nstatement_timeout = "5s"\n[query]\nstatement_timeout = "10s"\n`,
    {},
    /query\.statement_timeout/,
  ],
  [
    'an unbounded prompt length',
    `[auth]\njwt_secret = "${SECRET}"\n[events]\nprompt_max_chars = 10000000\n`,
    {},
    /events\.prompt_max_chars/,
  ],
  [
    'a default validity beyond the maximum',
    `[auth]\njwt_secret = "${SECRET}"\n[requests]\ndefault_validity = "100d"\nmax_validity = "90d"\n`,
    {},
    /requests\.default_validity/,
  ],
  [
    'a short log shipper token',
    `[auth]\njwt_secret = "${SECRET}"\n[audit]\ningest_token = "short"\n`,
    {},
    /audit\.ingest_token/,
  ],
  [
    'a sign-in lockout longer than the failure window',
    `[auth]\njwt_secret = "${SECRET}"\nsignin_lockout = "1h"\nsignin_failure_window = "15m"\n`,
    {},
    /auth\.signin_lockout/,
  ],
  [
    'no sign-in failures allowed at all',
    `[auth]\njwt_secret = "${SECRET}"\nsignin_max_failures = 0\n`,
    {},
    /auth\.signin_max_failures/,
  ],
  [
    'an archive to a directory without the directory',
    `[auth]\njwt_secret = "${SECRET}"\n[events.archive]\ntarget = "dir"\n`,
    {},
    /events\.archive\.dir/,
  ],
  [
    'an archive prefix with a slash at its end',
    `[auth]\njwt_secret = "${SECRET}"\n[events.archive]\ntarget = "s3"\nprefix = "archive/"\n`,
    {},
    /events\.archive\.prefix/,
  ],
  [
    'an archive target that does not exist',
    `[auth]\njwt_secret = "${SECRET}"\n[events.archive]\ntarget = "gcs"\n`,
    {},
    /events\.archive\.target/,
  ],
  [
    'a short log shipper token given in the environment',
    `[auth]\njwt_secret = "${SECRET}"\n`,
    { SVC_AUDIT_INGEST_TOKEN: 'short' },
    /audit\.ingest_token/,
  ],
];
for (const [what, toml, env, pattern] of refusals) {
  test(`startup refuses ${what}, naming the key`, () => {
    const path = file(`bad-${what.replace(/\W+/g, '-')}.toml`, toml);
    assert.throws(
      () => loadConfig({ env: { SVC_CONFIG: path, ...env } }),
      (err: unknown) => err instanceof ConfigError && pattern.test(err.message),
    );
  });
}

test('env = "local" loads without a JWT secret (npm start generates one); env = "prod" does not', () => {
  const path = file('no-secret.toml', `env = "local"\n`);
  assert.equal(loadConfig({ env: { SVC_CONFIG: path } }).auth.jwt_secret, '');
  // An IdP without the CLI sign-in signs nothing: prod needs no secret then.
  const idp = file(
    'prod-idp.toml',
    `env = "prod"\n[auth]\nprovider = "idp"\nidp_domain = "t.example.com"\nidp_audience = "c"\n`,
  );
  assert.equal(loadConfig({ env: { SVC_CONFIG: idp } }).auth.jwt_secret, '');
});

test('a 32-byte multi-byte secret is accepted (bytes, not characters, are counted)', () => {
  // 16 random letters of Latin-1 Supplement (à..ÿ), two bytes each in UTF-8.
  const secret = Array.from({ length: 16 }, () => String.fromCodePoint(0xe0 + randomInt(32))).join('');
  const path = file('utf8.toml', `[auth]\njwt_secret = "${secret}"\n`);
  assert.equal(loadConfig({ env: { SVC_CONFIG: path } }).auth.jwt_secret, secret);
});

test('a .json config file is read as JSON, with the same overrides and validation as TOML', () => {
  const toml = file(
    'same.toml',
    `port = 9100\n[auth]\njwt_secret = "${SECRET}"\n[health]\nprobe_interval = "1h"\n[cors]\nallowed_origins = ["https://a.example.com"]\n`,
  );
  const json = file(
    'same.json',
    JSON.stringify({
      port: 9100,
      auth: { jwt_secret: SECRET },
      health: { probe_interval: '1h' },
      cors: { allowed_origins: ['https://a.example.com'] },
    }),
  );
  const env = { PORT: '9200', SVC_DB_DSN: 'postgres://u@h/db' };
  const fromJson = loadConfig({ env: { SVC_CONFIG: json, ...env } });
  assert.deepEqual(fromJson, loadConfig({ env: { SVC_CONFIG: toml, ...env } }));
  assert.equal(fromJson.port, 9200);
  assert.equal(fromJson.health.probe_interval, 3_600_000);
  assert.equal(fromJson.db.dsn, 'postgres://u@h/db');
  // Validated the same way: a bad value names its key; text that is not JSON (TOML under a .json name) is refused.
  assert.throws(
    () =>
      loadConfig({ argv: ['--config', file('bad.json', JSON.stringify({ auth: { jwt_secret: 'short' } }))] }),
    (err: unknown) => err instanceof ConfigError && /auth\.jwt_secret/.test(err.message),
  );
  for (const [name, text] of [
    ['toml-named-json.json', `[auth]\njwt_secret = "${SECRET}"\n`],
    ['array.json', '[]'],
  ]) {
    assert.throws(
      () => loadConfig({ argv: ['--config', file(name!, text!)] }),
      (err: unknown) => err instanceof ConfigError && /is not valid JSON/.test(err.message),
      name,
    );
  }
});

test('a missing explicit config file is an error; a missing default file means defaults', () => {
  assert.throws(() => loadConfig({ argv: ['--config', join(dir, 'nope.toml')] }), ConfigError);
});

test('durations: examples and a property (sum of parts)', () => {
  assert.equal(parseDuration('15m'), 900_000);
  assert.equal(parseDuration('1h30m'), 5_400_000);
  assert.equal(parseDuration('500ms'), 500);
  assert.equal(parseDuration('1.5s'), 1500);
  for (const bad of ['', '15', 'm', '15 m', '15mins', '-5m', '1h 30m'])
    assert.equal(parseDuration(bad), undefined, bad);
  fc.assert(
    fc.property(fc.nat(1000), fc.nat(59), fc.nat(59), (h, m, s) => {
      assert.equal(parseDuration(`${h}h${m}m${s}s`), h * 3_600_000 + m * 60_000 + s * 1000);
    }),
  );
});

test('sections of the data-access area: defaults, and the token given directly by SVC_ENVSVC_TOKEN', () => {
  const path = file(
    'envsvc.toml',
    `[auth]\njwt_secret = "${SECRET}"\n[envsvc]\nprovider = "http"\nurl = "https://envsvc.example.com"\n`,
  );
  const fromEnvironment = randomSecret();
  const cfg = loadConfig({ env: { SVC_CONFIG: path, SVC_ENVSVC_TOKEN: fromEnvironment } });
  assert.deepEqual(cfg.envsvc, {
    provider: 'http',
    url: 'https://envsvc.example.com',
    token: fromEnvironment,
    timeout: 10_000,
  });
  assert.deepEqual(cfg.query, { statement_timeout: 5_000, max_rows: 1000, max_bytes: 1024 * 1024 });
  assert.equal(cfg.requests.default_validity, 30 * 86_400_000);
  assert.equal(cfg.requests.expiry_interval, 60_000);
});

test('secrets read by ARN fill their keys, below values given directly', () => {
  const path = file('secrets.toml', `[auth]\njwt_secret = "${SECRET}"\n`);
  const fromArn = randomSecret();
  assert.equal(
    loadConfig({ env: { SVC_CONFIG: path }, secrets: { 'auth.jwt_secret': fromArn } }).auth.jwt_secret,
    fromArn,
  );
  const direct = randomSecret();
  assert.equal(
    loadConfig({ env: { SVC_CONFIG: path, SVC_JWT_SECRET: direct }, secrets: { 'auth.jwt_secret': fromArn } })
      .auth.jwt_secret,
    direct,
  );
});

test('an unknown command-line option or one without its value is refused, naming it', () => {
  assert.throws(() => loadConfig({ argv: ['--prot', '9000'] }), /unknown option --prot/);
  assert.throws(() => loadConfig({ argv: ['--port'] }), /option --port needs a value/);
  assert.throws(() => loadConfig({ argv: ['--port', '--host', '::1'] }), /option --port needs a value/);
  assert.throws(() => loadConfig({ argv: ['9000'] }), /unknown option 9000/);
  assert.equal(loadConfig({ argv: ['--port=9002', '--host', '::1'] }).port, 9002);
});

test('npm start -- --help lists every option and environment override, and starts nothing', () => {
  const out = execFileSync(process.execPath, ['local-server/main.ts', '--help'], {
    encoding: 'utf8',
    timeout: 20_000,
  });
  for (const [name, o] of Object.entries(COMMAND_LINE_OPTIONS)) {
    assert.match(out, new RegExp(`${name} <value>\\s+${o.env}\\s`));
  }
  for (const [name, key] of Object.entries(ENVIRONMENT_OVERRIDES))
    assert.match(out, new RegExp(`${name}\\s+${key}`));
  assert.doesNotMatch(out, /listening/);
});
