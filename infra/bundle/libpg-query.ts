// Stands in for 'libpg-query' inside the Lambda bundles (an esbuild alias, infra/bundling.ts). The package starts
// compiling its 1.7 MB WASM parser as soon as it is imported, so the query function paid for it at module load.
// Its contract is already "call loadModule() before the synchronous functions"; this keeps that contract and
// imports the package in loadModule(), which code splitting turns into a chunk loaded by the first query.
// Only what the service uses is here: a bundle importing anything else fails at synth ("No matching export").
type LibPgQuery = typeof import('./libpg-query-parser.ts');

let library: LibPgQuery | undefined;

export async function loadModule(): Promise<void> {
  library ??= await import('./libpg-query-parser.ts');
  await library.loadModule();
}

export const parseSync: LibPgQuery['parseSync'] = (query) => {
  if (!library) throw new Error('WASM module not initialized. Call `loadModule()` first.');
  return library.parseSync(query);
};
