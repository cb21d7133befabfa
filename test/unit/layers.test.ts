// Imports point one way (CONTRIBUTING.md, "Layout"). shared/ is core/ plus one folder per feature:
// - core/ imports no feature, and inside it the parts point down: http → runtime → auth → db → config → errors.
// - A feature imports core, anything of its own, and another feature's public entry only: the files at the top of
//   that feature's folder (shared/<feature>/*.ts). Its subfolders are its own business.
// - shared/routes.ts merges each feature's routes.ts; of the features only meta (the OpenAPI document) reads it.
// - A function (functions/<feature>/) imports core, shared/routes.ts, its own feature, and other features' entries.
// The domain speaks no HTTP: it throws the service's errors (shared/core/errors.ts), and one table at the edge turns
// them into statuses. This test reads every import (static and `import()`) and fails on one that breaks a rule,
// naming the file.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { PROJECT_ROOT } from '#test/support/fresh-copy.ts';

const SHARED = join(PROJECT_ROOT, 'shared');
const FUNCTIONS = join(PROJECT_ROOT, 'functions');

/** Inside core: what each part may import besides itself (a part is a folder, or a file at the top of core/). */
const CORE_MAY_IMPORT: Readonly<Record<string, readonly string[]>> = {
  'errors.ts': [],
  // Structured logs: a leaf that every layer may write to.
  'logger.ts': [],
  'canonical-json.ts': [],
  'schemas/': [],
  // The stores of objects kept outside the database (the event archive, the audit anchors).
  'object-store/': [],
  'config/': ['errors.ts', 'logger.ts'],
  'db/': ['config/', 'errors.ts', 'logger.ts'],
  'auth/': ['db/', 'config/', 'errors.ts', 'logger.ts'],
  'runtime.ts': ['db/', 'config/', 'errors.ts', 'logger.ts'],
  'http/': [
    'runtime.ts',
    'auth/',
    'schemas/',
    'db/',
    'config/',
    'errors.ts',
    'logger.ts',
    'canonical-json.ts',
  ],
};

/** Imports that break a rule on purpose, each with why; one that no longer occurs must leave the list. */
const EXCEPTIONS: ReadonlyArray<readonly [from: string, to: string, why: string]> = [
  [
    'shared/core/auth/caller.ts',
    'shared/audit/audit.ts',
    'an IdP user seen for the first time is created and audited in the one statement that reads the caller',
  ],
];

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/** The files a module imports, resolved (relative and #alias specifiers; packages are not ours). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specifiers = [...text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|^import\s+)['"]([^'"]+)['"]/gm)].map(
    (m) => m[1]!,
  );
  return specifiers.flatMap((spec) => {
    if (spec.startsWith('.')) return [resolve(dirname(file), spec)];
    if (spec.startsWith('#')) return [join(PROJECT_ROOT, spec.slice(1))];
    return [];
  });
}

/** [feature or 'core' or 'routes.ts', path below it] of a file in shared/. */
const placeOf = (file: string): [string, string[]] => {
  const [top = '', ...rest] = relative(SHARED, file).split('/');
  return [top, rest];
};
const corePart = (rest: string[]) => (rest.length > 1 ? `${rest[0]}/` : rest[0]!);

/** Why `from` (in shared/) may not import `to`, or undefined when it may. */
function wrongInShared(from: string, to: string): string | undefined {
  if (!to.startsWith(`${SHARED}/`))
    return 'outside shared/: the library never reaches into functions, infra or tests';
  const [fromTop, fromRest] = placeOf(from);
  const [toTop, toRest] = placeOf(to);
  if (fromTop === 'core') {
    if (toTop !== 'core') return 'core imports no feature';
    const a = corePart(fromRest);
    const b = corePart(toRest);
    if (a === b) return undefined;
    const allowed = CORE_MAY_IMPORT[a];
    if (!allowed) return `core/${a} is not a part of core's layers: give it its place in CORE_MAY_IMPORT`;
    return allowed.includes(b) ? undefined : `core/${a} may import only ${allowed.join(', ') || 'itself'}`;
  }
  if (fromTop === 'routes.ts') {
    return toTop === 'core' || (toRest.length === 1 && toRest[0] === 'routes.ts')
      ? undefined
      : "shared/routes.ts merges the features' routes.ts and nothing else";
  }
  if (fromTop.endsWith('.ts')) return `shared/${fromTop} is no feature: move it into one (or into core)`;
  if (toTop === fromTop || toTop === 'core') return undefined;
  if (toTop === 'routes.ts') return fromTop === 'meta' ? undefined : 'only meta reads the merged route table';
  return toRest.length === 1
    ? undefined
    : `shared/${toTop}/${toRest[0]}/ is private to ${toTop}: import its entry`;
}

/** Why a function of `feature` may not import `to`, or undefined when it may. */
function wrongInFunctions(feature: string, to: string): string | undefined {
  if (!to.startsWith(`${SHARED}/`)) return undefined;
  const [toTop, toRest] = placeOf(to);
  if (toTop === 'core' || toTop === 'routes.ts' || toTop === feature || toRest.length === 1) return undefined;
  return `shared/${toTop}/${toRest[0]}/ is private to ${toTop}: import its entry`;
}

const rel = (file: string) => relative(PROJECT_ROOT, file);
const isException = (from: string, to: string) =>
  EXCEPTIONS.some(([a, b]) => a === rel(from) && b === rel(to));

test('every import of shared/ follows the layers: core below the features, features through their entries', () => {
  const wrong: string[] = [];
  for (const file of filesUnder(SHARED)) {
    for (const target of importsOf(file)) {
      const why = wrongInShared(file, target);
      if (why && !isException(file, target)) wrong.push(`${rel(file)} imports ${rel(target)} (${why})`);
    }
  }
  assert.deepEqual(wrong, []);
});

test("every function imports core, the route table, its own feature and other features' entries only", () => {
  const wrong: string[] = [];
  for (const file of filesUnder(FUNCTIONS)) {
    const [feature = ''] = relative(FUNCTIONS, file).split('/');
    for (const target of importsOf(file)) {
      const why = wrongInFunctions(feature, target);
      if (why) wrong.push(`${rel(file)} imports ${rel(target)} (${why})`);
    }
  }
  assert.deepEqual(wrong, []);
});

test('every exception still occurs (one that does not leaves the list)', () => {
  for (const [from, to] of EXCEPTIONS) {
    const file = join(PROJECT_ROOT, from);
    assert.ok(importsOf(file).includes(join(PROJECT_ROOT, to)), `${from} no longer imports ${to}`);
  }
});

test('the rules can fail', () => {
  const at = (path: string) => join(SHARED, path);
  // The HTTP core reaching into a feature, and core's layers upside down.
  assert.ok(wrongInShared(at('core/http/handler.ts'), at('devices/devices.ts')));
  assert.ok(wrongInShared(at('core/db/query.ts'), at('core/http/route.ts')));
  // A feature reaching behind another feature's entry, or reading the merged table.
  assert.ok(wrongInShared(at('policy/policy.ts'), at('observability/rollups/rollups.ts')));
  assert.ok(wrongInShared(at('devices/devices.ts'), at('routes.ts')));
  assert.equal(wrongInShared(at('policy/policy.ts'), at('devices/enrollment.ts')), undefined);
  assert.equal(
    wrongInShared(at('observability/summary/summary.ts'), at('observability/rollups/rollups.ts')),
    undefined,
  );
  // A function reaching behind another feature's entry; its own feature's insides are its own.
  assert.ok(wrongInFunctions('health', at('requests/environments/builtin/provider.ts')));
  assert.equal(wrongInFunctions('requests', at('requests/query/proxy.ts')), undefined);
});

/** The project's TypeScript sources (dependencies, build output and local state left out). */
function projectSources(dir = PROJECT_ROOT): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (name.startsWith('.') || name === 'node_modules' || name === 'cdk.out') return [];
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return projectSources(path);
    return /\.tsx?$/.test(name) ? [path] : [];
  });
}

// A double cast (to unknown, then to anything) turns the type checker off for that value. Fix the types instead:
// the ceiling only comes down. Built from parts so that this file does not count itself.
const DOUBLE_CAST = new RegExp(['as', 'unknown', 'as '].join(' '), 'g');
const DOUBLE_CAST_CEILING = 33;
const ASSERTED_ROWS = new RegExp(['\\bqueryRows', '<'].join(''));

test('double casts do not grow, and no raw statement asserts its row type', () => {
  let casts = 0;
  const asserted: string[] = [];
  for (const file of projectSources()) {
    const text = readFileSync(file, 'utf8');
    casts += text.match(DOUBLE_CAST)?.length ?? 0;
    // queryRows reads its rows through a row shape (col.*): a type argument would be a claim, not a check.
    if (ASSERTED_ROWS.test(text) && !file.endsWith(join('core', 'db', 'query.ts')))
      asserted.push(relative(PROJECT_ROOT, file));
  }
  assert.ok(
    casts <= DOUBLE_CAST_CEILING,
    `${casts} double casts, the ceiling is ${DOUBLE_CAST_CEILING}: fix the types`,
  );
  assert.deepEqual(
    asserted,
    [],
    'a type argument to queryRows asserts a row type: give it a row shape instead',
  );
});
