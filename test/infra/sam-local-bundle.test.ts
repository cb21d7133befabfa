// `cdk synth -c samLocal=true` bundles node-postgres into the functions (README, "sam local"). The deployment tests
// never bundle that way, so this builds one function as the stack does with the driver included and loads it.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { runNode } from '#test/support/child.ts';
import { ENTRY_FILE } from '../../infra/bundling.ts';
import { bundleFunction, PROJECT_ROOT } from './synth.ts';

const work = mkdtempSync(join(PROJECT_ROOT, 'node_modules', '.cache', 'acp-sam-local-'));
after(() => rmSync(work, { recursive: true, force: true }));

test('sam local: a function bundles with node-postgres and its module loads', async () => {
  const out = bundleFunction(join(work, 'cdk.out'), {
    entry: join(PROJECT_ROOT, 'functions/health/healthcheck.ts'),
    sourceMap: false,
    includePostgresDriver: true,
  });
  const code = readFileSync(join(out, ENTRY_FILE), 'utf8');
  // node-postgres itself is in the bundle, not left external as in a deployment.
  assert.ok(code.includes('Client was closed and is not queryable'), 'node-postgres is not bundled');
  const loaded = await runNode(
    [
      '--input-type=module',
      '-e',
      `const m = await import(${JSON.stringify(join(out, ENTRY_FILE))}); console.log(typeof m.handler);`,
    ],
    { cwd: out, env: { PATH: process.env.PATH ?? '', TZ: 'UTC' } },
  );
  assert.equal(loaded.code, 0, loaded.stderr);
  assert.equal(loaded.stdout.trim(), 'function');
});
