// Imports point one way (README, "Layout"): functions → http → domain → auth/device/schemas → db → config → errors.
// The domain speaks no HTTP: it throws the service's errors (shared/core/errors.ts), and one table at the edge turns them
// into statuses. This test reads every import of shared/ (static and `import()`) and fails on an edge that points
// the wrong way, naming the file.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { PROJECT_ROOT } from '#test/support/fresh-copy.ts';

const SHARED = join(PROJECT_ROOT, 'shared');

/** What each part of shared/ may import besides itself (a part is a folder, or a file at the top of shared/). */
const MAY_IMPORT: Readonly<Record<string, readonly string[]>> = {
  'errors.ts': [],
  // Structured logs: a leaf that every layer may write to.
  'logger.ts': [],
  'config/': ['errors.ts', 'logger.ts'],
  'db/': ['config/', 'errors.ts', 'logger.ts'],
  'schemas/': ['auth/', 'db/', 'config/', 'errors.ts', 'logger.ts'],
  'auth/': ['db/', 'config/', 'errors.ts', 'logger.ts'],
  'device/': ['db/', 'config/', 'errors.ts', 'logger.ts'],
  'domain/': ['auth/', 'device/', 'schemas/', 'db/', 'config/', 'errors.ts', 'logger.ts'],
  // The event archive's stores (a directory, S3): adapters of the domain's ArchiveStore, as http/ is of its routes.
  'archive/': ['domain/', 'config/', 'errors.ts', 'logger.ts'],
  'runtime.ts': ['domain/', 'auth/', 'device/', 'schemas/', 'db/', 'config/', 'errors.ts', 'logger.ts'],
  'http/': [
    'runtime.ts',
    'domain/',
    'auth/',
    'device/',
    'schemas/',
    'db/',
    'config/',
    'errors.ts',
    'logger.ts',
  ],
  'route-tables/': ['http/', 'schemas/', 'config/', 'errors.ts', 'logger.ts'],
  'routes.ts': ['route-tables/', 'http/', 'schemas/', 'config/', 'errors.ts', 'logger.ts'],
  'openapi.ts': ['routes.ts', 'route-tables/', 'http/', 'schemas/', 'config/', 'errors.ts', 'logger.ts'],
};

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : path.endsWith('.ts') ? [path] : [];
  });
}

const partOf = (file: string): string => {
  const [top = ''] = relative(SHARED, file).split('/');
  return top.endsWith('.ts') ? top : `${top}/`;
};

/** The files a module imports, resolved (relative and #shared/ specifiers; packages are not ours). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specifiers = [...text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|^import\s+)['"]([^'"]+)['"]/gm)].map(
    (m) => m[1]!,
  );
  return specifiers.flatMap((spec) => {
    if (spec.startsWith('.')) return [resolve(dirname(file), spec)];
    if (spec.startsWith('#shared/')) return [join(SHARED, spec.slice('#shared/'.length))];
    if (spec.startsWith('#')) return [join(PROJECT_ROOT, spec.slice(1))];
    return [];
  });
}

test('every import of shared/ points down the layers', () => {
  const wrong: string[] = [];
  for (const file of filesUnder(SHARED)) {
    const from = partOf(file);
    const allowed = MAY_IMPORT[from];
    for (const target of importsOf(file)) {
      const where = `${relative(PROJECT_ROOT, file)} imports ${relative(PROJECT_ROOT, target)}`;
      if (!target.startsWith(`${SHARED}/`)) {
        // The Lambdas' library never reaches into the functions, the infrastructure, the tests or the scripts.
        wrong.push(`${where} (outside shared/)`);
        continue;
      }
      const to = partOf(target);
      if (to === from) continue;
      if (!allowed) wrong.push(`${where} (${from} is not a part of the library: move it out of shared/)`);
      else if (!allowed.includes(to))
        wrong.push(`${where} (${from} may import only ${allowed.join(', ') || 'itself'})`);
    }
  }
  assert.deepEqual(wrong, []);
});

test('the rule can fail: an import of the HTTP layer from the domain is caught', () => {
  const fake = join(SHARED, 'domain', 'example.ts');
  assert.equal(partOf(fake), 'domain/');
  assert.ok(!MAY_IMPORT['domain/']?.includes(partOf(join(SHARED, 'http', 'handler.ts'))));
});
