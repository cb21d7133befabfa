// The route table as one function's bundle sees it. shared/routes.ts merges the area tables of
// shared/<feature>/routes.ts into the one table every consumer reads; a handler file imports that table and uses its
// own row. In a bundle that would build every row's zod schemas at cold start (each area's schemas module runs
// when imported), so the stack points `#shared/routes.ts` of each function at a small generated module that
// exports a table of the function's own rows, nothing else (an esbuild alias, see infra/bundling.ts). An area module
// exports each row on its own too (`/* @__PURE__ */ defineRoute(...)`), so the bundle leaves the area's other rows
// out; when a row has no export of its own, or the handler reads from `routes` anything but its own rows, the module
// re-exports the whole area table instead. The rows are the very objects of shared/routes.ts (checked by identity
// here); a handler whose rows are not all in one area table, or that imports from the table a name its area module
// does not export, gets the whole table.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AuthKind, RouteSpec } from '#shared/core/http/route.ts';
import { routeList } from '#shared/routes.ts';
import { contentHash } from './settings.ts';

interface AreaTable {
  /** Absolute path of the shared/<feature>/routes.ts module. */
  file: string;
  exportName: string;
  rows: ReadonlySet<RouteSpec>;
  /** Everything the module exports (e.g. cliSigninEnabled next to deviceRoutes). */
  exports: ReadonlySet<string>;
  /** The name under which the module exports a row on its own, for the rows it exports so. */
  rowExports: ReadonlyMap<RouteSpec, string>;
}

const isRouteSpec = (value: unknown): value is RouteSpec =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as RouteSpec).handler === 'string' &&
  typeof (value as RouteSpec).path === 'string';

/** Every exported table of shared/<feature>/routes.ts whose rows are rows of shared/routes.ts. */
async function loadAreaTables(projectRoot: string): Promise<AreaTable[]> {
  const shared = join(projectRoot, 'shared');
  const tableRows = new Set(routeList.map(([, route]) => route as RouteSpec));
  const tables: AreaTable[] = [];
  for (const feature of readdirSync(shared, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(shared, entry.name, 'routes.ts')))
    .map((entry) => entry.name)
    .sort()) {
    const file = join(shared, feature, 'routes.ts');
    const module = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
    const rowExports = new Map<RouteSpec, string>();
    for (const [exportName, value] of Object.entries(module)) {
      if (isRouteSpec(value) && tableRows.has(value) && !rowExports.has(value))
        rowExports.set(value, exportName);
    }
    for (const [exportName, value] of Object.entries(module)) {
      if (typeof value !== 'object' || value === null || isRouteSpec(value)) continue;
      const rows = Object.values(value).filter(isRouteSpec);
      if (rows.length === 0 || !rows.every((row) => tableRows.has(row))) continue;
      tables.push({
        file,
        exportName,
        rows: new Set(rows),
        exports: new Set(Object.keys(module)),
        rowExports,
      });
    }
  }
  return tables;
}

// Top-level await: the stack's constructor is synchronous, and the area modules are ES modules.
const loadedTables = await loadAreaTables(join(import.meta.dirname, '..'));

/** Names a handler file imports from `#shared/routes.ts` (import { a, b } from '#shared/routes.ts'). */
export function importedRouteNames(entry: string): string[] | undefined {
  const source = readFileSync(entry, 'utf8');
  const match = /import\s*\{([^}]*)\}\s*from\s*['"]#shared\/routes\.ts['"]/.exec(source);
  return match?.[1]
    ?.split(',')
    .map((name) => name.trim())
    .filter(Boolean);
}

/**
 * The names a handler file reads from the `routes` it imports (`routes.queryRequest`), or undefined when it uses
 * `routes` in any other way (then it gets the whole area table).
 */
export function readRouteNames(entry: string): string[] | undefined {
  const source = readFileSync(entry, 'utf8').replace(
    /import\s*\{[^}]*\}\s*from\s*['"]#shared\/routes\.ts['"]/,
    '',
  );
  const uses = [...source.matchAll(/\broutes\b(\??\.\s*(\w+))?/g)];
  if (uses.some((use) => use[2] === undefined)) return undefined;
  return [...new Set(uses.map((use) => use[2]!))];
}

/**
 * The area table that holds every row naming `handler` and exports every other name the handler file imports from
 * `#shared/routes.ts`, with those names; undefined when there is none (the bundle then gets the whole table).
 */
export function areaTableFor(
  handler: string,
  entry: string,
): { table: AreaTable; alsoImported: string[] } | undefined {
  const rows = routeList
    .filter(([, route]) => route.handler === handler)
    .map(([, route]) => route as RouteSpec);
  const names = importedRouteNames(entry);
  if (rows.length === 0 || !names?.includes('routes')) return undefined;
  const alsoImported = names.filter((name) => name !== 'routes');
  const table = loadedTables.find(
    (candidate) =>
      rows.every((row) => candidate.rows.has(row)) &&
      alsoImported.every((name) => candidate.exports.has(name)),
  );
  return table ? { table, alsoImported } : undefined;
}

/**
 * Writes the module that stands in for `#shared/routes.ts` in the bundle of `handler` (into `dir`, named by its
 * content) and returns its path, or undefined when the handler gets the whole table.
 */
export function writeRouteTableModule(handler: string, entry: string, dir: string): string | undefined {
  const found = areaTableFor(handler, entry);
  if (!found) return undefined;
  const { table, alsoImported } = found;
  const from = JSON.stringify(table.file);
  // The function's own rows, each by its own export, when it has one and the handler reads no other row.
  const own = routeList
    .filter(([, route]) => route.handler === handler)
    .map(([id, route]) => ({ id, exportName: table.rowExports.get(route as RouteSpec) }));
  const read = readRouteNames(entry);
  const ownRows =
    own.every((row) => row.exportName !== undefined) &&
    (read?.every((name) => own.some((row) => row.id === name)) ?? false);
  const text =
    `// Generated by infra/route-tables.ts: #shared/routes.ts as the bundle of functions/${handler}.ts sees it.\n` +
    (ownRows
      ? `import { ${[...new Set(own.map((row) => row.exportName))].join(', ')} } from ${from};\n`
      : `import { ${table.exportName} } from ${from};\n`) +
    (alsoImported.length > 0 ? `export { ${alsoImported.join(', ')} } from ${from};\n` : '') +
    (ownRows
      ? `export const routes = { ${own.map((row) => `${row.id}: ${row.exportName}`).join(', ')} };\n`
      : `export const routes = ${table.exportName};\n`);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${contentHash(text)}.ts`);
  writeFileSync(file, text);
  return file;
}

/** The rows shared/core/http/middleware/bearer-auth.ts authenticates with a bearer token (shared/core/auth/authenticate.ts, loaded then). */
const BEARER_TOKEN_AUTH: ReadonlySet<AuthKind> = new Set<AuthKind>(['user', 'admin', 'device+user']);

/**
 * Whether a row of the function whose source is `entry` (functions/<handler>.ts) takes a bearer token. When none
 * does, its bundle leaves the token authenticators out (infra/bundling.ts).
 */
export function takesBearerToken(entry: string, projectRoot: string): boolean {
  return routeList.some(
    ([, route]) =>
      join(projectRoot, 'functions', `${route.handler}.ts`) === entry && BEARER_TOKEN_AUTH.has(route.auth),
  );
}
