// `npm run synth` is `cdk synth` through the pinned CLI: it must read the cloud assembly the pinned aws-cdk-lib
// writes (the schema versions of the two packages must match), offline (no lookups, no credentials), with the local
// esbuild (no Docker). This runs the real CLI, as ops do, into a temporary --output directory.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { cdkJsonContext, PROJECT_ROOT } from './synth.ts';

const output = mkdtempSync(join(tmpdir(), 'acp-cdk-synth-'));
after(() => rmSync(output, { recursive: true, force: true }));

interface Manifest {
  version: string;
  artifacts: Record<string, { type: string; properties?: { templateFile?: string } }>;
}

test('the pinned CLI synthesizes the app: exit 0, the stack template in the assembly', () => {
  const packageJson = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  assert.equal(packageJson.scripts.synth, 'cdk synth');
  const result = spawnSync(
    join(PROJECT_ROOT, 'node_modules/.bin/cdk'),
    ['synth', '--quiet', '--output', output],
    {
      cwd: PROJECT_ROOT,
      encoding: 'utf8',
      env: {
        PATH: `${join(PROJECT_ROOT, 'node_modules/.bin')}:${process.env.PATH ?? ''}`,
        HOME: output,
        TZ: 'UTC',
        // Offline: no credentials, no instance metadata, no version check or telemetry.
        AWS_EC2_METADATA_DISABLED: 'true',
        CDK_DISABLE_VERSION_CHECK: '1',
        CDK_DISABLE_CLI_TELEMETRY: 'true',
      },
      timeout: 15 * 60_000,
    },
  );
  assert.equal(result.status, 0, `cdk synth exited ${result.status}:\n${result.stderr.slice(-4000)}`);
  assert.doesNotMatch(result.stderr, /Cloud assembly schema version mismatch/);

  const manifest = JSON.parse(readFileSync(join(output, 'manifest.json'), 'utf8')) as Manifest;
  const stacks = Object.entries(manifest.artifacts).filter(
    ([, artifact]) => artifact.type === 'aws:cloudformation:stack',
  );
  assert.equal(stacks.length, 1);
  const [stackName, stack] = stacks[0]!;
  const templateFile = join(output, stack.properties?.templateFile ?? `${stackName}.template.json`);
  assert.ok(existsSync(templateFile), templateFile);
  const template = JSON.parse(readFileSync(templateFile, 'utf8')) as {
    Resources: Record<string, { Type: string; Metadata?: Record<string, string> }>;
  };
  // The functions were bundled locally: each asset directory holds its index.mjs.
  const functions = Object.values(template.Resources).filter(
    (resource) => resource.Type === 'AWS::Lambda::Function' && resource.Metadata?.['aws:asset:path'],
  );
  assert.ok(functions.length > 0);
  for (const fn of functions) {
    const dir = join(output, fn.Metadata!['aws:asset:path']!);
    const files = readdirSync(dir);
    assert.ok(files.includes('index.mjs') || files.includes('index.js'), `${dir}: ${files.join(', ')}`);
  }
  // The config named by cdk.json built it (its env becomes the stack description).
  assert.match(JSON.stringify(template), new RegExp(`config ${String(cdkJsonContext().config)}`));
  // Nothing was looked up: no context file written next to cdk.json.
  assert.ok(
    !existsSync(join(PROJECT_ROOT, 'cdk.context.json')),
    'cdk synth wrote cdk.context.json (a lookup)',
  );
});
