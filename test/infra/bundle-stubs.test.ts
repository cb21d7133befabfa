// What the Lambda bundles leave out or narrow (infra/bundling.ts), proven on small bundles built exactly as the
// functions are (infra/bundle/split.ts): each stand-in offers what its importers take from the real module, and what
// the bundles keep works as the real package does. test/infra/bundles.test.ts checks the functions themselves.
import assert from 'node:assert/strict';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { build, type Metafile } from 'esbuild';
import * as zod from 'zod';
import { buildSplit, literalSchemaKeys } from '../../infra/bundle/split.ts';
import {
  BUILTIN_ENVIRONMENTS_STUB,
  BUNDLE_ALIASES,
  esbuildOptions,
  HTTP_ENVIRONMENTS_STUB,
  IDP_VERIFIER_STUB,
  INTERNAL_STUBS,
  type InternalStub,
  RUNTIME_ASSETS,
  S3_CUSTOMIZATIONS_STUB,
  SDK_SCHEMA_MODULES,
  SOURCE_REWRITES,
  type SplitBuild,
  TOKEN_AUTHENTICATOR_STUB,
} from '../../infra/bundling.ts';
import { startS3Server } from '../support/s3-server.ts';
import { PROJECT_ROOT } from './synth.ts';
import { samples } from './zod-json-schema-samples.ts';

const ALL_STUBS: InternalStub[] = [
  ...INTERNAL_STUBS,
  TOKEN_AUTHENTICATOR_STUB,
  IDP_VERIFIER_STUB,
  HTTP_ENVIRONMENTS_STUB,
  BUILTIN_ENVIRONMENTS_STUB,
];
let work: string;

before(() => {
  const cache = join(PROJECT_ROOT, 'node_modules', '.cache');
  mkdirSync(cache, { recursive: true });
  work = mkdtempSync(join(cache, 'acp-bundle-stubs-'));
});
after(() => {
  if (work) rmSync(work, { recursive: true, force: true, maxRetries: 5 });
});

/** Bundles `source` (a module of its own) as a function is bundled, with `stubs`, and imports the result. */
async function bundled<T>(
  name: string,
  source: string,
  stubs?: InternalStub[],
  change?: Partial<SplitBuild>,
) {
  const entry = join(work, `${name}.ts`);
  writeFileSync(entry, source);
  const dir = join(work, name);
  const split = { ...esbuildOptions({ entry, stagingDir: work, sourceMap: false }, PROJECT_ROOT), ...change };
  const result = await buildSplit(stubs ? { ...split, stubs } : split, dir, {
    metafile: true,
    logLevel: 'silent',
  });
  for (const asset of RUNTIME_ASSETS) copyFileSync(join(PROJECT_ROOT, asset.from), join(dir, asset.name));
  const load = async () => (await import(pathToFileURL(join(dir, 'index.mjs')).href)) as T;
  const metafile = result.metafile as Metafile;
  /** Bytes each input left in the output files. */
  const kept = (input: string) =>
    Object.values(metafile.outputs).reduce((n, output) => n + (output.inputs[input]?.bytesInOutput ?? 0), 0);
  return { load, warnings: result.warnings.map((w) => w.text), inputs: metafile.inputs, kept };
}

const sourceFiles = (dir: string) =>
  readdirSync(join(PROJECT_ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => join(PROJECT_ROOT, dir, file));

test('each internal stub stands for a file its importer does import (a package update that moves it fails here)', () => {
  for (const stub of ALL_STUBS) {
    const importer = join(PROJECT_ROOT, stub.importer);
    const module = join(PROJECT_ROOT, stub.module);
    assert.ok(existsSync(join(PROJECT_ROOT, stub.stub)), stub.stub);
    assert.ok(existsSync(module), stub.module);
    const specifiers = [
      ...readFileSync(importer, 'utf8').matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*)["'](\.[^"']+)["']/g),
    ].map((match) => resolve(dirname(importer), match[1]!));
    assert.ok(
      specifiers.some((target) => target === module || `${target}.js` === module),
      `${stub.importer} imports ${stub.module}`,
    );
  }
});

/** The names a module exports at run time (esbuild reads them; types are not among them). */
async function exportsOf(file: string): Promise<Set<string>> {
  const result = await build({
    entryPoints: [join(PROJECT_ROOT, file)],
    bundle: true,
    write: false,
    metafile: true,
    format: 'esm',
    platform: 'node',
    outdir: join(work, 'exports'),
    logLevel: 'silent',
  });
  return new Set(Object.values(result.metafile.outputs).flatMap((output) => output.exports));
}

/**
 * The names an importer's `source` takes from the module `specifier` names: `* as ns` (its members used),
 * `{ a, b as c }`, `export { a } from`, `const { a } = await import(...)`; for an `import()` whose result is kept for later, the real
 * module's exports the source mentions (`realExports`).
 */
function namesTaken(source: string, specifier: string, realExports: ReadonlySet<string>): string[] {
  const spec = specifier.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  const names = new Set<string>();
  for (const [, ns] of source.matchAll(
    new RegExp(`import\\s*\\*\\s*as\\s+(\\w+)\\s+from\\s*["']${spec}["']`, 'g'),
  )) {
    for (const [, member] of source.matchAll(new RegExp(`\\b${ns}\\.(\\w+)`, 'g'))) names.add(member!);
  }
  for (const pattern of [
    `import\\s*\\{([^}]*)\\}\\s*from\\s*["']${spec}["']`,
    `export\\s*\\{([^}]*)\\}\\s*from\\s*["']${spec}["']`,
    `\\{([^}]*)\\}\\s*=\\s*await\\s+import\\(\\s*["']${spec}["']\\s*\\)`,
  ]) {
    for (const [, list] of source.matchAll(new RegExp(pattern, 'g'))) {
      for (const part of list!.split(',')) {
        const name = part
          .trim()
          .split(/\s+as\s+|\s*:\s*/)[0]!
          .replace(/^type\s+/, '');
        if (name) names.add(name);
      }
    }
  }
  const kept = new RegExp(`(?<!await\\s+)import\\(\\s*["']${spec}["']\\s*\\)`);
  if (kept.test(source) && !new RegExp(`=\\s*await\\s+import\\(\\s*["']${spec}`).test(source)) {
    for (const name of realExports) if (new RegExp(`\\b${name}\\b`).test(source)) names.add(name);
  }
  return [...names];
}

test('each stand-in exports every name its importer takes from the real module', async () => {
  for (const stub of ALL_STUBS) {
    const importer = join(PROJECT_ROOT, stub.importer);
    const source = readFileSync(importer, 'utf8');
    const specifiers = [...source.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*)["'](\.[^"']+)["']/g)]
      .map((match) => match[1]!)
      .filter((specifier) => {
        const target = resolve(dirname(importer), specifier);
        return (
          join(PROJECT_ROOT, stub.module) === target || join(PROJECT_ROOT, stub.module) === `${target}.js`
        );
      });
    const offered = await exportsOf(stub.stub);
    const real = await exportsOf(stub.module);
    const taken = specifiers.flatMap((specifier) => namesTaken(source, specifier, real));
    assert.ok(taken.length > 0, `${stub.importer}: names taken from ${stub.module}`);
    for (const name of taken) {
      if (!real.has(name)) continue; // a type, or a member of something else that shares the name
      assert.ok(offered.has(name), `${stub.stub} lacks ${name} (${stub.importer})`);
    }
  }
  // And each is what the bundles load there.
  for (const [i, stub] of ALL_STUBS.entries()) {
    const { warnings, inputs } = await bundled(
      `importer-${i}`,
      `export * from ${JSON.stringify(join(PROJECT_ROOT, stub.importer))};\n`,
      ALL_STUBS,
    );
    assert.deepEqual(warnings, [], stub.importer);
    assert.ok(stub.stub in inputs, `${stub.stub} stands in for ${stub.module} in ${stub.importer}`);
  }
});

test('the packages narrowed by an alias offer every name the code takes from them with import()', async () => {
  // Named static imports are checked by esbuild at bundling; names destructured from `await import(...)` are not.
  let checked = 0;
  for (const file of [
    ...sourceFiles('shared'),
    ...sourceFiles('functions'),
    ...sourceFiles('infra/functions'),
  ]) {
    for (const [, names, specifier] of readFileSync(file, 'utf8').matchAll(
      /const\s*\{([^}]+)\}\s*=\s*await\s+import\(\s*['"]([^'"]+)['"]\s*\)/g,
    )) {
      const alias = BUNDLE_ALIASES[specifier!];
      if (!alias?.endsWith('.mjs')) continue;
      const { load } = await bundled<Record<string, unknown>>(
        `alias-${checked++}`,
        `export * from ${JSON.stringify(resolve(PROJECT_ROOT, alias))};\n`,
      );
      const module = await load();
      for (const name of names!.split(',').map((part) => part.split(':')[0]!.trim())) {
        assert.equal(typeof module[name], 'function', `${specifier} as bundled lacks ${name} (${file})`);
      }
    }
  }
  assert.ok(checked > 0, 'the scan finds the Secrets Manager client loaded with import()');
});

test('z.toJSONSchema as bundled gives what zod gives, for every kind of schema; the method form is left out', async () => {
  type Bundled = {
    jsonSchemas: (params: object) => Record<string, unknown>;
    methodForm: () => unknown;
    standardForm: () => unknown;
  };
  const samplesModule = JSON.stringify(join(PROJECT_ROOT, 'test/infra/zod-json-schema-samples.ts'));
  const { load, inputs } = await bundled<Bundled>(
    'zod-json-schema',
    [
      "import * as z from 'zod';",
      `import { samples } from ${samplesModule};`,
      'export const jsonSchemas = (params: object) =>',
      '  Object.fromEntries(Object.entries(samples(z)).map(([k, s]) => [k, z.toJSONSchema(s, params)]));',
      'export const methodForm = () => z.string().toJSONSchema();',
      "export const standardForm = () => z.string()['~standard'].jsonSchema.input({ target: 'draft-2020-12' });",
      '',
    ].join('\n'),
  );
  assert.ok('infra/bundle/zod-json-schema-processors.ts' in inputs);
  const inBundle = await load();
  for (const io of ['input', 'output'] as const) {
    for (const target of ['draft-2020-12', 'draft-07', 'openapi-3.0'] as const) {
      const params = { io, target, unrepresentable: 'any' as const };
      const expected = Object.fromEntries(
        Object.entries(samples(zod)).map(([k, s]) => [k, zod.toJSONSchema(s, params)]),
      );
      assert.deepEqual(inBundle.jsonSchemas(params), expected, `${io} ${target}`);
    }
  }
  // Unrepresentable types are refused the same way by default.
  assert.throws(() => inBundle.jsonSchemas({}), /BigInt cannot be represented/);
  assert.ok(zod.string().toJSONSchema());
  assert.throws(inBundle.methodForm, /not bundled/);
  assert.throws(inBundle.standardForm, /not bundled/);
});

test('the SQL parser as bundled: loaded by its first use, then parsing synchronously', async () => {
  type Bundled = {
    parse: (sql: string) => Promise<{ stmts: unknown[] }>;
    parseEarly: (sql: string) => unknown;
  };
  const { load } = await bundled<Bundled>(
    'libpg-query',
    [
      "import { loadModule, parseSync } from 'libpg-query';",
      'export const parseEarly = (sql: string) => parseSync(sql);',
      'export async function parse(sql: string) {',
      '  await loadModule();',
      '  return parseSync(sql);',
      '}',
      '',
    ].join('\n'),
  );
  const parser = await load();
  assert.throws(() => parser.parseEarly('SELECT 1'), /loadModule/);
  const parsed = await parser.parse('SELECT a FROM t WHERE b = 1; SELECT 2');
  assert.equal(parsed.stmts.length, 2);
  await assert.rejects(parser.parse('SELEC 1'), /syntax error/);
});

test('drizzle as bundled: tables with columns given as an object; the callback form says it is left out', async () => {
  type Bundled = { objectForm: () => unknown; callbackForm: () => unknown };
  const { load } = await bundled<Bundled>(
    'drizzle-columns',
    [
      "import { getTableName } from 'drizzle-orm';",
      "import { pgTable, text } from 'drizzle-orm/pg-core';",
      "export const objectForm = () => getTableName(pgTable('t', { a: text() }));",
      "export const callbackForm = () => pgTable('t', (c) => ({ a: c.text() }));",
      '',
    ].join('\n'),
  );
  const drizzle = await load();
  assert.equal(drizzle.objectForm(), 't');
  assert.throws(drizzle.callbackForm, /callback form of columns is not bundled/);
});

test('the SDK clients as bundled carry their package version alone, and put it in the user agent', async () => {
  type Bundled = { userAgents: () => Promise<unknown[]> };
  const source = [
    "import { RDSDataClient } from '@aws-sdk/client-rds-data';",
    "import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';",
    'export const userAgents = () =>',
    "  Promise.all([new RDSDataClient({ region: 'us-east-1' }), new SecretsManagerClient({ region: 'us-east-1' })]",
    '    .map((client) => client.config.defaultUserAgentProvider()));',
    '',
  ].join('\n');
  const trimmed = await bundled<Bundled>('sdk-version', source);
  // The same bundle with the whole package.json files, for comparison.
  const whole = await bundled<Bundled>('sdk-version-whole', source, undefined, {
    versionOnlyPackageJson: '^$',
  });
  const manifests = Object.keys(trimmed.inputs).filter((file) => file.endsWith('/package.json'));
  assert.deepEqual(manifests.sort(), [
    'node_modules/@aws-sdk/client-rds-data/package.json',
    'node_modules/@aws-sdk/client-secrets-manager/package.json',
  ]);
  for (const file of manifests) {
    assert.ok(trimmed.inputs[file]!.bytes < 40, `${file}: ${trimmed.inputs[file]!.bytes} bytes`);
    assert.ok(whole.inputs[file]!.bytes > 1000, `${file}: ${whole.inputs[file]!.bytes} bytes`);
  }
  const expected = await (await whole.load()).userAgents();
  const versions = manifests.map(
    (file) => (JSON.parse(readFileSync(join(PROJECT_ROOT, file), 'utf8')) as { version: string }).version,
  );
  for (const version of versions) assert.ok(JSON.stringify(expected).includes(`"${version}"`), version);
  assert.deepEqual(await (await trimmed.load()).userAgents(), expected);
});

test('the code imports zod as a namespace, whose members the bundles tree-shake one by one', () => {
  // `import { z } from 'zod'` uses the namespace object as a value: every export of zod would be bundled.
  let imports = 0;
  for (const file of [
    ...sourceFiles('shared'),
    ...sourceFiles('functions'),
    ...sourceFiles('infra/functions'),
  ]) {
    for (const [statement] of readFileSync(file, 'utf8').matchAll(/^import\s[^;]*from\s*['"]zod['"];/gm)) {
      imports++;
      assert.match(statement, /^import (type )?\* as z from 'zod';$|^import type /, `${file}: ${statement}`);
    }
  }
  assert.ok(imports > 5);
});

test("every computed key of the bundled SDK clients' schemas becomes a string literal", () => {
  const clients = readdirSync(join(PROJECT_ROOT, 'node_modules/@aws-sdk')).filter((name) =>
    name.startsWith('client-'),
  );
  assert.ok(clients.length >= 3, clients.join());
  const pattern = new RegExp(SDK_SCHEMA_MODULES);
  for (const client of clients) {
    const file = join(PROJECT_ROOT, 'node_modules/@aws-sdk', client, 'dist-es/schemas/schemas_0.js');
    assert.match(file, pattern);
    const text = readFileSync(file, 'utf8');
    assert.match(text, /\[_\w+\]:/, `${client}: computed keys to rewrite`);
    // A key the module does not declare as a string would stay computed (and keep its shapes in every bundle).
    assert.doesNotMatch(literalSchemaKeys(text), /\[[^\]\n]*\]:/, client);
  }
  assert.equal(
    literalSchemaKeys('const _a = "x";\nconst b = { [_a]: 1, [_z]: 2 };'),
    'const _a = "x";\nconst b = { "x": 1, [_z]: 2 };',
  );
});

test('an S3 client bundles the shapes of the commands it sends, and puts, gets and misses objects as the whole one', async () => {
  type Bundled = { roundTrip: (endpoint: string, bucket: string) => Promise<unknown> };
  const source = [
    "import { GetObjectCommand, NoSuchKey, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';",
    'export async function roundTrip(endpoint: string, bucket: string) {',
    "  const client = new S3Client({ region: 'us-east-1', endpoint, forcePathStyle: true });",
    '  try {',
    "    await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'a/b.bin', Body: new Uint8Array([1, 2, 3]), ContentType: 'application/octet-stream' }));",
    "    const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'a/b.bin' }));",
    '    const bytes = [...(await got.Body!.transformToByteArray())];',
    "    const missing = await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'none' })).then(",
    "      () => 'found',",
    '      (err: unknown) => [err instanceof NoSuchKey, (err as Error).name, (err as { $metadata: { httpStatusCode: number } }).$metadata.httpStatusCode].join(" "),',
    '    );',
    '    return { bytes, contentType: got.ContentType, missing };',
    '  } finally {',
    '    client.destroy();',
    '  }',
    '}',
    '',
  ].join('\n');
  // As the event archive is bundled: with @smithy/core's S3 endpoint customizations.
  const stubs = INTERNAL_STUBS.filter((stub) => stub !== S3_CUSTOMIZATIONS_STUB);
  const literal = await bundled<Bundled>('s3-literal-keys', source, stubs);
  const computed = await bundled<Bundled>('s3-computed-keys', source, stubs, { literalSchemaKeys: '^$' });
  const schemas = 'node_modules/@aws-sdk/client-s3/dist-es/schemas/schemas_0.js';
  assert.ok(computed.kept(schemas) > 50_000, `${computed.kept(schemas)} bytes with computed keys`);
  assert.ok(literal.kept(schemas) < 15_000, `${literal.kept(schemas)} bytes with literal keys`);
  const s3 = await startS3Server('bundle-schemas');
  try {
    const expected = {
      bytes: [1, 2, 3],
      contentType: 'application/octet-stream',
      missing: 'true NoSuchKey 404',
    };
    assert.deepEqual(await (await computed.load()).roundTrip(s3.endpoint, s3.bucket), expected);
    assert.deepEqual(await (await literal.load()).roundTrip(s3.endpoint, s3.bucket), expected);
  } finally {
    await s3.close();
  }
});

test('each source rewrite replaces text its file has (a package update that changes it fails here)', () => {
  for (const rewrite of SOURCE_REWRITES) {
    const text = readFileSync(join(PROJECT_ROOT, rewrite.file), 'utf8');
    for (const [from] of rewrite.replace) assert.ok(text.includes(from), `${rewrite.file}: ${from}`);
  }
});

test("zod as bundled: util.js's helpers tree-shaken one by one, and schemas parse as zod's own do", async () => {
  type Bundled = { results: () => unknown[] };
  const source = [
    "import * as z from 'zod';",
    'const schema = z.object({',
    "  name: z.string().min(2).catch('anonymous'),",
    '  port: z.coerce.number().int().positive().default(8080),',
    "  mode: z.enum(['a', 'b']).optional(),",
    '  tags: z.array(z.string()).catch(() => []),',
    '});',
    'export const results = () =>',
    "  [{ name: 'x', port: '80', mode: 'b', tags: [1] }, { name: 'long', port: -1, mode: 'c' }, {}].map((input) => {",
    '    const r = schema.safeParse(input);',
    '    return r.success ? r.data : r.error.issues.map((i) => [i.path.join("."), i.code, i.message]);',
    '  });',
    '',
  ].join('\n');
  const rewritten = await bundled<Bundled>('zod-rewritten', source);
  const whole = await bundled<Bundled>('zod-whole', source, undefined, { rewrites: [] });
  const util = 'node_modules/zod/v4/core/util.js';
  assert.ok(
    whole.kept(util) - rewritten.kept(util) > 3000,
    `${whole.kept(util)} → ${rewritten.kept(util)} bytes`,
  );
  const expected = await (await whole.load()).results();
  assert.deepEqual(expected[0], { name: 'anonymous', port: 80, mode: 'b', tags: [] });
  assert.deepEqual(await (await rewritten.load()).results(), expected);
});
