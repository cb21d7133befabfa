// npm run openapi: writes the OpenAPI 3.1 document generated from the route table to openapi.json.
import { writeFileSync } from 'node:fs';
import { buildOpenApi } from '#shared/meta/openapi.ts';

const target = process.argv[2] ?? 'openapi.json';
writeFileSync(target, `${JSON.stringify(buildOpenApi(), null, 2)}\n`);
console.log(`wrote ${target}`);
