// `cdk synth -c samLocal=true` bundles node-postgres into the functions (README, "sam local"). The deployment tests
// never bundle that way, so this builds one function as the stack does with the driver included and loads it.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { runNode } from '#test/support/child.ts';
import { buildSplit } from '../../infra/bundle/split.ts';
import { esbuildOptions } from '../../infra/bundling.ts';
import { PROJECT_ROOT } from './synth.ts';

const work = mkdtempSync(join(tmpdir(), 'acp-sam-local-'));
after(() => rmSync(work, { recursive: true, force: true }));

test('sam local: a function bundles with node-postgres and its module loads', async () => {
  const out = join(work, 'healthcheck');
  const split = esbuildOptions(
    {
      entry: join(PROJECT_ROOT, 'functions/health/healthcheck.ts'),
      stagingDir: join(work, 'staging'),
      sourceMap: false,
      includePostgresDriver: true,
      deployment: { authProvider: 'local', envProvider: 'builtin' },
    },
    PROJECT_ROOT,
  );
  await buildSplit(split, out);
  const code = readdirSync(out)
    .filter((file) => file.endsWith('.mjs'))
    .map((file) => readFileSync(join(out, file), 'utf8'))
    .join('\n');
  // node-postgres itself is in the bundle, not left external as in a deployment.
  assert.ok(code.includes('Client was closed and is not queryable'), 'node-postgres is not bundled');
  const loaded = await runNode(
    [
      '--input-type=module',
      '-e',
      `const m = await import(${JSON.stringify(join(out, 'index.mjs'))}); console.log(typeof m.handler);`,
    ],
    { cwd: out, env: { PATH: process.env.PATH ?? '', TZ: 'UTC' } },
  );
  assert.equal(loaded.code, 0, loaded.stderr);
  assert.equal(loaded.stdout.trim(), 'function');
});
