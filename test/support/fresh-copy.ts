// A fresh copy of the project, as a clone holds it (sources only: no installed packages, build output or local data),
// with the installed packages linked in (what `npm ci` would install from the same lockfile), in a temporary
// directory. The tests that run the users' own commands (`npx cdk synth`, the README) run there, so that nothing they
// write lands in the checkout and nothing left in the checkout helps them.
import { cpSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Top-level entries a clone does not have. */
const NOT_IN_A_CLONE = /^(node_modules|\.git|cdk\.out.*|\.data|test-artifacts)$/;

export interface FreshCopy {
  dir: string;
  remove(): void;
}

export function freshCopy(prefix: string): FreshCopy {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  cpSync(PROJECT_ROOT, dir, {
    recursive: true,
    filter: (source) => !NOT_IN_A_CLONE.test(relative(PROJECT_ROOT, source).split(sep)[0] ?? ''),
  });
  symlinkSync(join(PROJECT_ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
