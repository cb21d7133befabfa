// The API contract in the tests: every response a test sees, through the local server or from a Lambda handler, is
// checked against the served OpenAPI document. Its status must be documented for that operation, and its body must be
// valid against the documented schema (JSON Schema 2020-12, ajv). A mismatch fails the test that made the request.
// Each check is also counted in CONTRACT_COVERAGE_DIR (set by test/support/global-setup.ts), so that the run can say
// how much of the document the tests exercise (the summary reporter prints contractFigures).
import { appendFileSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { GatewayResponse } from '#local-server/api-gateway.ts';
import { buildOpenApi } from '#shared/meta/openapi.ts';

interface Operation {
  operationId: string;
  responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
}
type Document = {
  paths: Record<string, Record<string, Operation>>;
} & Record<string, unknown>;

const document = buildOpenApi() as Document;
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
addFormats.default(ajv);
ajv.addSchema(document, 'openapi');

const compiled = new Map<string, ValidateFunction>();
const pointer = (...parts: string[]) =>
  parts.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');

/** The documented operation for a method and a concrete path ('/v1/requests/123' finds '/v1/requests/{id}'). */
export function findOperation(
  method: string,
  path: string,
): { template: string; operation: Operation } | undefined {
  const bare = path.split('?')[0] ?? path;
  for (const [template, methods] of Object.entries(document.paths)) {
    const operation = methods[method.toLowerCase()];
    if (!operation) continue;
    const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`);
    if (pattern.test(bare)) return { template, operation };
  }
  return undefined;
}

export interface Exchange {
  method: string;
  /** The request path as sent (a concrete path) or a path template. */
  path: string;
  status: number;
  /** The response body as sent ('' for none). */
  body: string;
  contentType?: string;
}

/** What is wrong with a response, according to the document; empty when nothing is. */
export function contractProblems(exchange: Exchange): string[] {
  const { method, path, status, body } = exchange;
  const found = findOperation(method, path);
  // What no route matches is the API's default route: 404 {error, message}.
  if (!found)
    return status === 404 ? errorBodyProblems(body) : [`${method} ${path}: no such operation documented`];
  const { template, operation } = found;
  const where = `${method.toUpperCase()} ${template} → ${status}`;
  const response = operation.responses[String(status)];
  record(operation.operationId, status);
  if (!response) {
    return [
      `${where}: status ${status} is not documented (documented: ${Object.keys(operation.responses).join(', ')})`,
    ];
  }
  const content = response.content ?? {};
  // A page or a script: any text.
  if (!content['application/json']) {
    return body && !Object.keys(content).length ? [`${where}: a body is sent, none is documented`] : [];
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return [`${where}: the body is not JSON: ${body.slice(0, 200)}`];
  }
  const key = `openapi#/${pointer('paths', template, method.toLowerCase(), 'responses', String(status), 'content', 'application/json', 'schema')}`;
  let validate = compiled.get(key);
  if (!validate) {
    validate = ajv.getSchema(key);
    if (!validate) return [`${where}: the documented schema does not compile`];
    compiled.set(key, validate);
  }
  if (validate(parsed)) return [];
  return (validate.errors ?? [])
    .slice(0, 8)
    .map(
      (e) =>
        `${where}: body${e.instancePath || ''} ${e.message ?? ''} ${JSON.stringify(e.params)} (schema ${e.schemaPath})`,
    );
}

function errorBodyProblems(body: string): string[] {
  try {
    const parsed = JSON.parse(body) as Record<string, unknown>;
    const keys = Object.keys(parsed).sort().join(',');
    return keys === 'error,message' && typeof parsed.error === 'string' && typeof parsed.message === 'string'
      ? []
      : [`default route: the body is not {error, message}: ${body.slice(0, 200)}`];
  } catch {
    return [`default route: the body is not JSON: ${body.slice(0, 200)}`];
  }
}

/** Throws when the response does not match the document (for the helpers that make requests). */
export function assertContract(exchange: Exchange): void {
  const problems = contractProblems(exchange);
  if (problems.length) {
    throw new Error(
      `The response does not match the OpenAPI document:\n  ${problems.join('\n  ')}\n${exchange.body.slice(0, 1000)}`,
    );
  }
}

/** `operationId status` per line, appended to this process's file in CONTRACT_COVERAGE_DIR. */
function record(operationId: string, status: number): void {
  const dir = process.env.CONTRACT_COVERAGE_DIR;
  if (dir) appendFileSync(join(dir, `${process.pid}.txt`), `${operationId} ${status}\n`);
}

/** Every (operation, status) pair the document has. */
function documentedPairs(): string[] {
  return Object.values(document.paths).flatMap((methods) =>
    Object.values(methods).flatMap((op) =>
      Object.keys(op.responses).map((status) => `${op.operationId} ${status}`),
    ),
  );
}

/** The figures of a run: how many responses were checked, and how much of the document they cover. */
export function contractFigures(dir: string): string | undefined {
  if (!existsSync(dir)) return undefined;
  const checked = readdirSync(dir).flatMap((f) =>
    readFileSync(join(dir, f), 'utf8').split('\n').filter(Boolean),
  );
  if (!checked.length) return undefined;
  const documented = new Set(documentedPairs());
  const seen = new Set(checked.filter((pair) => documented.has(pair)));
  const operations = new Set([...documented].map((pair) => pair.split(' ')[0]));
  const seenOperations = new Set([...seen].map((pair) => pair.split(' ')[0]));
  return (
    `OpenAPI contract: ${checked.length} responses checked against the document; ${seenOperations.size} of ` +
    `${operations.size} operations and ${seen.size} of ${documented.size} documented (operation, status) pairs seen`
  );
}

/**
 * Checks every response of an in-process local server (its `onResponse`). The request helper that made a request
 * takes its result and throws there, failing that test; responses to other clients (the agent SDK, a browser) that
 * broke the contract are thrown by assertNone() when the service is disposed.
 */
export class ContractRecorder {
  private readonly broken = new Map<string, string>();

  readonly onResponse = (response: GatewayResponse): void => {
    const problems = contractProblems(response);
    if (problems.length) {
      this.broken.set(
        response.requestId,
        `The response does not match the OpenAPI document:\n  ${problems.join('\n  ')}\n${response.body.slice(0, 1000)}`,
      );
    }
  };

  /** Throws if the response with this apigw-requestid broke the contract. */
  take(requestId: string | null): void {
    if (!requestId) return;
    const problem = this.broken.get(requestId);
    this.broken.delete(requestId);
    if (problem) throw new Error(problem);
  }

  /** Throws if any response that no helper took broke the contract. */
  assertNone(): void {
    const problems = [...this.broken.values()];
    this.broken.clear();
    if (problems.length) throw new Error(problems.join('\n\n'));
  }
}
