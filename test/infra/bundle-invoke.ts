// Invoking a bundled function as Lambda does, for the bundle test and the cold-start benchmark: a fresh Node
// process loads the bundle's index.js and calls its handler with an API Gateway (payload 2.0) or schedule event.
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type { RouteSpec } from '#shared/core/http/route.ts';

/**
 * The child's script: `node invoke.mjs <module> <event.json> <result.json>`. As the Lambda runtime does, it loads a
 * CommonJS handler file (.js) with `require`, and an ES module (the function's .ts source) with `import`.
 */
export const RUNNER = `
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
const [bundle, eventFile, resultFile] = process.argv.slice(2);
const mod = bundle.endsWith('.js') ? createRequire(import.meta.url)(bundle) : await import(pathToFileURL(bundle).href);
const context = {
  awsRequestId: 'bundle-test', functionName: process.env.AWS_LAMBDA_FUNCTION_NAME, functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:bundle-test', memoryLimitInMB: '512',
  logGroupName: 'bundle-test', logStreamName: 'bundle-test', callbackWaitsForEmptyEventLoop: false,
  getRemainingTimeInMillis: () => 20000, done() {}, fail() {}, succeed() {},
};
let outcome;
try {
  // Several invocations of one container when asked (what is cached per container is then visible).
  for (let i = Number(process.env.BUNDLE_TEST_INVOCATIONS ?? 1); i > 0; i--) {
    outcome = { result: await mod.handler(JSON.parse(readFileSync(eventFile, 'utf8')), context) };
  }
} catch (err) {
  outcome = { error: { name: err?.name, message: err?.message } };
}
writeFileSync(resultFile, JSON.stringify(outcome ?? {}));
process.exit(0);
`;

/** What Lambda gives every function's process (the role's credentials, the region), besides its own variables. */
export const LAMBDA_ENVIRONMENT = {
  TZ: 'UTC',
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'AKIDBUNDLETEST',
  AWS_SECRET_ACCESS_KEY: 'bundle-test-secret-key',
  AWS_SESSION_TOKEN: 'bundle-test-session-token',
} as const;

/** An API Gateway event for `route`, with a fresh UUID for each path parameter. */
export function httpEvent(
  route: RouteSpec,
  options: { token?: string; body?: unknown; query?: Record<string, string> } = {},
): APIGatewayProxyEventV2 {
  const pathParameters: Record<string, string> = {};
  const rawPath = route.path.replace(/\{(\w+)\+?\}/g, (_, name: string) => {
    pathParameters[name] = randomUUID();
    return pathParameters[name];
  });
  const headers: Record<string, string> = { host: 'bundle.test', 'user-agent': 'bundle-test' };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: string | undefined;
  if (options.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.body);
  }
  const now = new Date();
  const rawQueryString = new URLSearchParams(options.query ?? {}).toString();
  return {
    version: '2.0',
    routeKey: `${route.method} ${route.path}`,
    rawPath,
    rawQueryString,
    headers,
    ...(options.query ? { queryStringParameters: options.query } : {}),
    ...(Object.keys(pathParameters).length ? { pathParameters } : {}),
    requestContext: {
      accountId: '123456789012',
      apiId: 'bundletest',
      domainName: 'bundle.test',
      domainPrefix: 'bundle',
      http: {
        method: route.method,
        path: rawPath,
        protocol: 'HTTP/1.1',
        sourceIp: '203.0.113.7',
        userAgent: 'bundle-test',
      },
      requestId: randomUUID(),
      routeKey: `${route.method} ${route.path}`,
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    ...(body !== undefined ? { body } : {}),
    isBase64Encoded: false,
  };
}

/**
 * The archive and anchor functions write to the stack's buckets, and the anchors are signed by its KMS key, none of
 * which exists locally: a copy of a bundle's config (`configFile`) that writes both into directories under `dir`,
 * with a key file there. Returns the copy's path (for SVC_CONFIG); the S3 and signing paths have their own tests.
 */
export function localStoresConfig(configFile: string, dir: string): string {
  const config = JSON.parse(readFileSync(configFile, 'utf8'));
  config.events.archive = { ...config.events.archive, target: 'dir', dir: join(dir, 'archive') };
  config.audit.anchors = {
    ...config.audit.anchors,
    target: 'dir',
    dir,
    key_file: join(dir, 'key.pem'),
    kms_key_id: '',
  };
  const file = join(dir, 'config.json');
  writeFileSync(file, JSON.stringify(config));
  return file;
}
