// GET /v1/docs: the API reference, the OpenAPI document (GET /v1/openapi.json) rendered for people by Redoc in the
// browser. GET /v1/docs/redoc.standalone.js: Redoc's script, served from this function's own files (the bundle
// carries a copy, infra/bundling.ts RUNTIME_ASSETS; locally it is read from node_modules). Nothing is loaded from
// elsewhere, and the page's Content-Security-Policy says so.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { httpHandler } from '#shared/core/http/handler.ts';
import { text } from '#shared/core/http/reply.ts';
import { metaRoutes as routes } from '#shared/meta/routes.ts';

const SCRIPT = 'redoc.standalone.js';
const SCRIPT_FILES = [
  join(import.meta.dirname, SCRIPT),
  join(import.meta.dirname, '../../node_modules/redoc/bundles', SCRIPT),
];

/**
 * Scripts only from this API; the document fetched from it; Redoc's styles are injected inline (styled-components)
 * and its search runs in a worker it creates from a blob.
 */
export const REFERENCE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  'worker-src blob:',
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Agent control plane API reference</title>
</head>
<body>
<redoc spec-url="${routes.openapi.path}"></redoc>
<script src="${routes.apiReferenceScript.path}"></script>
</body>
</html>
`;

let script: Promise<string> | undefined;
async function readScript(): Promise<string> {
  for (const file of SCRIPT_FILES) {
    try {
      return await readFile(file, 'utf8');
    } catch {
      // not here: the next place
    }
  }
  throw new Error(`${SCRIPT} is missing: neither bundled with this function nor installed (redoc)`);
}

export const handler = httpHandler(routes.apiReference, async (_input, { event }) => {
  if (event.rawPath === routes.apiReferenceScript.path) {
    script ??= readScript();
    return text(await script, 'text/javascript; charset=utf-8', { 'cache-control': 'public, max-age=86400' });
  }
  return text(PAGE, 'text/html; charset=utf-8', {
    'cache-control': 'public, max-age=300',
    'content-security-policy': REFERENCE_CSP,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
  });
});
