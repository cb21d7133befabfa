import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { parse as parseToml } from 'smol-toml';
import { loadConfig } from '#shared/core/config/load.ts';
import { randomSecret } from '#test/support/secrets.ts';
import { AWS_DEFAULTS, DeploymentConfigError, loadDeployment } from '../../infra/settings.ts';
import { PROJECT_ROOT } from './synth.ts';

const dir = mkdtempSync(join(tmpdir(), 'acp-settings-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};
const SECRET = randomSecret();

test('config/prod.toml is a valid service config once the secret is given, and has no secret itself', () => {
  const prod = join(PROJECT_ROOT, 'config/prod.toml');
  const raw = parseToml(readFileSync(prod, 'utf8')) as { env?: string; auth?: Record<string, unknown> };
  assert.equal(raw.env, 'prod');
  assert.equal(raw.auth?.jwt_secret, undefined);
  // What a function does at cold start: the file plus the secret from Secrets Manager.
  const config = loadConfig({ argv: ['--config', prod], env: { SVC_JWT_SECRET: SECRET } });
  assert.equal(config.env, 'prod');
  const deployment = loadDeployment(prod);
  assert.deepEqual(deployment.warnings, []);
  assert.equal(deployment.config.health.probe_interval, config.health.probe_interval);
});

test('the config bundled into the functions leaves out secrets, the DSN, the bootstrap admin and [aws]', () => {
  const path = file(
    'full.toml',
    [
      'env = "local"',
      'dashboard_url = "https://dash.example.com"',
      '[db]',
      'dsn = "postgres://app:hunter2@db/app"',
      '[auth]',
      `jwt_secret = "${SECRET}"`,
      '[bootstrap]',
      'admin_email = "root@example.com"',
      'admin_password = "bootstrap-password"',
      '[aws]',
      'db_max_acu = 2',
      '[health]',
      'probe_interval = "1h"',
    ].join('\n'),
  );
  const deployment = loadDeployment(path);
  for (const secret of [SECRET, 'hunter2', 'bootstrap-password', 'db_max_acu']) {
    assert.ok(!deployment.lambdaConfigToml.includes(secret), secret);
  }
  const bundled = parseToml(deployment.lambdaConfigToml) as Record<string, Record<string, unknown>>;
  assert.equal(bundled.health?.probe_interval, '1h');
  assert.equal((bundled as Record<string, unknown>).dashboard_url, 'https://dash.example.com');
  assert.equal(deployment.aws.db_max_acu, 2);
  assert.match(deployment.warnings.join('\n'), /auth\.jwt_secret is ignored/);
  // The functions' view of it: valid with the secret from Secrets Manager and the DSN from the stack.
  const lambdaFile = file('lambda.toml', deployment.lambdaConfigToml);
  const config = loadConfig({
    argv: ['--config', lambdaFile],
    env: { SVC_JWT_SECRET: SECRET, SVC_DB_DSN: 'data-api://controlplane?resourceArn=a&secretArn=b' },
  });
  assert.equal(config.health.probe_interval, 3_600_000);
});

test('AWS settings: CDK context over the [aws] table over the defaults, validated', () => {
  const path = file(
    'aws.toml',
    `[auth]\njwt_secret = "${SECRET}"\n[aws]\ndb_max_acu = 2\nlog_retention_days = 14\n`,
  );
  const fromFile = loadDeployment(path);
  assert.equal(fromFile.aws.db_max_acu, 2);
  assert.equal(fromFile.aws.log_retention_days, 14);
  assert.equal(fromFile.aws.api_rate_limit, AWS_DEFAULTS.api_rate_limit);
  assert.deepEqual([fromFile.aws.signin_rate_limit, fromFile.aws.signin_burst_limit], [5, 10]);
  assert.equal(fromFile.aws.db_auto_pause, 10 * 60_000);
  // -c values arrive as strings.
  const fromContext = loadDeployment(path, { dbMaxAcu: '16', dbAutoPause: '30m', region: 'eu-west-1' });
  assert.equal(fromContext.aws.db_max_acu, 16);
  assert.equal(fromContext.aws.db_auto_pause, 30 * 60_000);
  assert.equal(fromContext.aws.region, 'eu-west-1');
  for (const [key, value, message] of [
    ['dbMaxAcu', '0.3', /db_max_acu/],
    ['dbAutoPause', '1m', /db_auto_pause/],
    ['logRetentionDays', '10', /log_retention_days/],
    ['region', 'moon-1', /region/],
    ['signinRateLimit', '150', /signin_rate_limit: must not be above api_rate_limit/],
    ['signinBurstLimit', '0', /signin_burst_limit/],
  ] as const) {
    assert.throws(() => loadDeployment(path, { [key]: value }), message);
  }
});

test('a config the service would refuse is refused at synth, naming the key', () => {
  const path = file('bad.toml', `[auth]\njwt_secret = "${SECRET}"\n[health]\nprobe_interval = "soon"\n`);
  assert.throws(
    () => loadDeployment(path),
    (err: unknown) => err instanceof DeploymentConfigError && /health\.probe_interval/.test(err.message),
  );
  assert.throws(() => loadDeployment(join(dir, 'missing.toml')), /cannot read config/);
});

test('a deployment without dashboard_url nor console warns that CLI sign-in is disabled; with either, it does not', () => {
  const noDashboard = file('no-dashboard.toml', 'env = "prod"\n');
  const without = loadDeployment(noDashboard, { console: 'false' });
  assert.equal(without.aws.console, false);
  assert.match(without.warnings.join('\n'), /CLI sign-in is disabled: no dashboard_url and no console/);
  // The console is on by default, and it is the dashboard then (infra/stack.ts).
  const withConsole = loadDeployment(noDashboard);
  assert.equal(withConsole.aws.console, true);
  assert.deepEqual(withConsole.warnings, []);
  const withIt = loadDeployment(
    file('dashboard.toml', 'env = "prod"\ndashboard_url = "https://dash.example.com"\n'),
  );
  assert.deepEqual(withIt.warnings, []);
});
