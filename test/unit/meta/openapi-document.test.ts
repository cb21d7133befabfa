// The served OpenAPI document loads in the tools its readers use: swagger-parser validates and dereferences it,
// `redocly lint` (redocly.yaml) finds no error and no warning, every schema compiles as JSON Schema 2020-12, and the
// typed client generated from it (client/openapi.d.ts) is current.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import SwaggerParser from '@apidevtools/swagger-parser';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { buildOpenApi } from '#shared/meta/openapi.ts';
import { routeList } from '#shared/routes.ts';
import { PROJECT_ROOT } from '#test/support/fresh-copy.ts';
import { CLIENT_TYPES_FILE, generateClientTypes } from '../../../scripts/openapi-client.ts';

const document = buildOpenApi();
const dir = mkdtempSync(join(tmpdir(), 'acp-openapi-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('swagger-parser validates and dereferences it', async () => {
  await SwaggerParser.validate(structuredClone(document) as never);
  const dereferenced = (await SwaggerParser.dereference(structuredClone(document) as never)) as unknown as {
    paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
  };
  assert.equal(Object.keys(dereferenced.paths).length, new Set(routeList.map(([, r]) => r.path)).size);
  assert.doesNotMatch(
    JSON.stringify(document),
    /#\/\$defs\//,
    'a reference into $defs resolves against nothing',
  );
});

test('redocly lint: 0 errors and 0 warnings (redocly.yaml says which rules are off, and why)', () => {
  const file = join(dir, 'openapi.json');
  writeFileSync(file, JSON.stringify(document));
  const result = spawnSync(
    join(PROJECT_ROOT, 'node_modules/.bin/redocly'),
    ['lint', file, '--config', join(PROJECT_ROOT, 'redocly.yaml'), '--format=json'],
    {
      encoding: 'utf8',
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    },
  );
  const report = JSON.parse(result.stdout) as {
    totals: { errors: number; warnings: number };
    problems: Array<{ ruleId: string; message: string; location: Array<{ pointer: string }> }>;
  };
  const problems = report.problems.map((p) => `${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`);
  assert.deepEqual(report.totals, { errors: 0, warnings: 0, ignored: 0 }, problems.join('\n'));
});

test('every schema in it compiles as JSON Schema 2020-12', () => {
  const ajv = new Ajv2020({ strict: false });
  addFormats.default(ajv);
  ajv.addSchema(document, 'openapi');
  const { components } = document as { components: { schemas: Record<string, unknown> } };
  for (const name of Object.keys(components.schemas)) {
    assert.ok(ajv.getSchema(`openapi#/components/schemas/${name}`), name);
  }
});

test('client/openapi.d.ts is what npm run openapi:client generates from it', async () => {
  assert.equal(
    readFileSync(CLIENT_TYPES_FILE, 'utf8'),
    await generateClientTypes(),
    'client/openapi.d.ts is stale: run npm run openapi:client',
  );
});
