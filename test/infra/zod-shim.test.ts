// The Lambda bundles replace 'zod' with infra/bundle/zod.ts (an esbuild alias): the same API without the locales
// and the other members Lambda never uses. A member the code uses and the stand-in lacks would be `undefined` only
// in the bundles, so every `z.<member>` of the code is checked against it here.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import * as real from 'zod';
import * as standIn from '../../infra/bundle/zod.ts';
import { BUNDLE_ALIASES } from '../../infra/bundling.ts';
import { PROJECT_ROOT } from './synth.ts';

function sources(dir: string): string[] {
  return readdirSync(join(PROJECT_ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => join(PROJECT_ROOT, dir, file));
}

test('every z.<member> the service uses exists in the bundles’ zod as it does in zod', () => {
  assert.equal(BUNDLE_ALIASES.zod, './infra/bundle/zod.ts');
  const used = new Set<string>();
  for (const file of [...sources('shared'), ...sources('functions'), ...sources('infra/functions')]) {
    for (const [, member] of readFileSync(file, 'utf8').matchAll(/\bz\.([A-Za-z_$][\w$]*)/g))
      used.add(member!);
  }
  assert.ok(used.has('object') && used.has('string'), 'the scan finds the code’s zod calls');
  const realZ = real.z as unknown as Record<string, unknown>;
  const shimZ = standIn.z as unknown as Record<string, unknown>;
  for (const member of used) {
    // Type-only members (z.infer, z.ZodType used as a type…) exist in neither at run time.
    if (!(member in realZ)) continue;
    assert.equal(typeof shimZ[member], typeof realZ[member], `z.${member}`);
  }
  // Values are zod's own: a schema built with the stand-in is a zod schema.
  const schema = standIn.z.object({ at: standIn.z.iso.datetime(), n: standIn.z.coerce.number() });
  assert.ok(schema instanceof real.z.ZodType);
  assert.deepEqual(schema.parse({ at: '2026-01-01T00:00:00Z', n: '3' }), {
    at: '2026-01-01T00:00:00Z',
    n: 3,
  });
  const failed = schema.safeParse({ at: 'yesterday', n: 'x' });
  assert.equal(failed.success, false);
  assert.ok(failed.error instanceof real.z.ZodError);
  // English messages, as zod installs by default.
  assert.match(failed.error.issues[0]!.message, /^Invalid /);
  // What it leaves out.
  assert.ok(!('locales' in shimZ) && !('core' in shimZ) && 'locales' in realZ);
});
