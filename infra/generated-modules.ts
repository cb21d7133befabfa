// The modules generated at synth time that stand in for project modules in a function's bundle (esbuild aliases,
// infra/bundling.ts): its own rows of the route table (infra/route-tables.ts) and, for the function that serves it,
// the OpenAPI document (infra/openapi-module.ts).
import { join } from 'node:path';
import { OPENAPI_MODULE, writeOpenApiModule } from './openapi-module.ts';
import { writeRouteTableModule } from './route-tables.ts';

/** Specifier → generated file for the function `handler` (source `entry`), written under `stagingDir`. */
export function generatedModules(handler: string, entry: string, stagingDir: string): Record<string, string> {
  const routes = writeRouteTableModule(handler, entry, join(stagingDir, 'lambda-routes'));
  const openapi = writeOpenApiModule(entry, join(stagingDir, 'lambda-openapi'));
  return {
    ...(routes ? { '#shared/routes.ts': routes } : {}),
    ...(openapi ? { [OPENAPI_MODULE]: openapi } : {}),
  };
}
