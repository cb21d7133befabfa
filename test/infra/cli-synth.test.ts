// `npx cdk synth` as ops run it: the real, pinned CDK CLI in a fresh copy of the project, with cdk.json's own
// settings (the default, relative output directory `cdk.out`), offline (no lookups, no AWS credentials), with the
// local esbuild (no Docker). The in-process stack tests synthesize with an absolute outdir, so they cannot see what
// only the CLI does (a relative outdir once broke every function's bundling this way). The copy is the temporary
// output: nothing is written into the checkout.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { freshCopy } from '#test/support/fresh-copy.ts';
import { planFunctions } from '../../infra/plan.ts';
import { loadDeployment } from '../../infra/settings.ts';
import { cdkJsonContext, PROJECT_ROOT } from './synth.ts';

const fresh = freshCopy('acp-cli-synth-');
const copy = fresh.dir;
after(() => fresh.remove());

interface Manifest {
  artifacts: Record<string, { type: string; properties?: { templateFile?: string } }>;
}
interface CfnTemplate {
  Description?: string;
  Resources: Record<
    string,
    { Type: string; Metadata?: Record<string, string>; Properties?: Record<string, unknown> }
  >;
}

test('npx cdk synth in a fresh copy: exit 0, one bundled function per planned handler, nothing looked up', () => {
  const result = spawnSync('npx', ['cdk', 'synth', '--quiet'], {
    cwd: copy,
    encoding: 'utf8',
    env: {
      PATH: process.env.PATH ?? '',
      HOME: copy,
      TZ: 'UTC',
      // Offline: no credentials, no instance metadata, no version check or telemetry.
      AWS_EC2_METADATA_DISABLED: 'true',
      CDK_DISABLE_VERSION_CHECK: '1',
      CDK_DISABLE_CLI_TELEMETRY: 'true',
    },
    timeout: 15 * 60_000,
  });
  assert.equal(result.status, 0, `npx cdk synth exited ${result.status}:\n${result.stderr.slice(-4000)}`);
  assert.doesNotMatch(result.stderr, /Cloud assembly schema version mismatch/);
  assert.doesNotMatch(result.stderr, /Could not resolve/);

  const output = join(copy, 'cdk.out');
  const manifest = JSON.parse(readFileSync(join(output, 'manifest.json'), 'utf8')) as Manifest;
  const stacks = Object.entries(manifest.artifacts).filter(
    ([, artifact]) => artifact.type === 'aws:cloudformation:stack',
  );
  assert.equal(stacks.length, 1);
  const [stackName, stack] = stacks[0]!;
  const template = JSON.parse(
    readFileSync(join(output, stack.properties?.templateFile ?? `${stackName}.template.json`), 'utf8'),
  ) as CfnTemplate;

  // The config named by cdk.json built it (the stack description names it).
  const configFile = String(cdkJsonContext().config);
  assert.match(template.Description ?? '', new RegExp(`config ${configFile}`));

  // One Lambda per planned handler (the route table's, the schedules', the not-found fallback) plus the migration
  // trigger's (CDK's own custom-resource providers aside); each asset directory holds the bundle esbuild wrote, with
  // the function's config beside it (Migrate: the migrations).
  const deployment = loadDeployment(join(PROJECT_ROOT, configFile), cdkJsonContext());
  // Without a dashboard_url of its own, the stack's console is the dashboard (CLI sign-in deployed).
  const dashboard = deployment.config.dashboard_url ?? (deployment.aws.console ? 'console' : undefined);
  const planned = planFunctions({ ...deployment.config, dashboard_url: dashboard }, PROJECT_ROOT);
  // Each feature's functions are in its nested stack, whose template is an asset of the root stack's.
  const nestedStacks = Object.values(template.Resources).filter(
    (resource) => resource.Type === 'AWS::CloudFormation::Stack',
  );
  assert.equal(
    nestedStacks.length,
    new Set(planned.map((p) => p.feature)).size,
    'one nested stack per feature',
  );
  const nestedTemplates = nestedStacks.map((resource) => {
    const file = join(output, resource.Metadata?.['aws:asset:path'] ?? '');
    assert.ok(existsSync(file) && file.endsWith('.nested.template.json'), `nested template ${file}`);
    return JSON.parse(readFileSync(file, 'utf8')) as CfnTemplate;
  });
  const bundled = [template, ...nestedTemplates]
    .flatMap((t) => Object.values(t.Resources))
    .filter(
      (resource) =>
        resource.Type === 'AWS::Lambda::Function' &&
        resource.Properties?.Handler === 'index.handler' &&
        String(resource.Properties?.Runtime).startsWith('nodejs') &&
        resource.Metadata?.['aws:asset:path'],
    );
  assert.equal(bundled.length, planned.length + 1, 'functions: one per planned handler, plus Migrate');
  for (const fn of bundled) {
    const dir = join(output, fn.Metadata!['aws:asset:path']!);
    const files = readdirSync(dir);
    assert.ok(files.includes('index.js'), `${dir}: ${files.join(', ')}`);
    const isMigrate = fn.Metadata!['aws:cdk:path']?.endsWith('/Migrate/Resource');
    if (isMigrate)
      assert.ok(
        readdirSync(join(dir, 'migrations')).some((f) => f.endsWith('.sql')),
        `${dir}: no SQL`,
      );
    else assert.ok(files.includes('config.json'), `${dir}: no config.json`);
    assert.ok(readFileSync(join(dir, 'index.js'), 'utf8').length > 0);
  }

  // Nothing was looked up (no context file next to cdk.json), and nothing was written into the checkout.
  assert.ok(!existsSync(join(copy, 'cdk.context.json')), 'cdk synth wrote cdk.context.json (a lookup)');
  assert.ok(!existsSync(join(PROJECT_ROOT, 'cdk.context.json')));
});
