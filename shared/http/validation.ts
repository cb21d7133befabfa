// The messages of 400 validation_failed (docs/api.md, "Errors"): each problem names its field, as the part of the
// request it is in followed by a dotted path with [i] indices (body.events[3].tool, query.limit, path.id), and says
// what was expected. A batch also says which of its items is the first invalid one.
import type { z } from 'zod';
import { type HttpError, validationFailed } from './errors.ts';

/** Where a field is: the JSON body, the query string, or the path. */
export type RequestPart = 'body' | 'query' | 'path';

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$-]*$/;

/** `.events[3].tool`: each member (`["odd key"]` when it is not a plain name) or index of a path. */
function pathText(path: ReadonlyArray<PropertyKey>): string {
  let text = '';
  for (const key of path) {
    if (typeof key === 'number') text += `[${key}]`;
    else text += IDENTIFIER.test(String(key)) ? `.${String(key)}` : `[${JSON.stringify(String(key))}]`;
  }
  return text;
}

/** `body.events[3].tool`, `query.limit`, `path.id`: the part of the request, then the path in it. */
export const fieldName = (part: RequestPart, path: ReadonlyArray<PropertyKey>): string =>
  part + pathText(path);

/** 400 validation_failed for one field: `<field>: <problem>`. */
export const invalidField = (
  part: RequestPart,
  path: ReadonlyArray<PropertyKey>,
  problem: string,
): HttpError => validationFailed(`${fieldName(part, path)}: ${problem}`);

type Issue = z.core.$ZodIssue;
interface Problem {
  path: PropertyKey[];
  message: string;
}

const FORMATS: Record<string, string> = {
  uuid: 'expected a UUID',
  guid: 'expected a UUID',
  datetime: 'expected an RFC 3339 date-time with a zone, e.g. 2026-01-15T09:30:00Z',
  date: 'expected a date, e.g. 2026-01-15',
  email: 'expected an email address',
  url: 'expected an absolute URL',
};

/** zod's own wording where it does not say what was expected; a schema's own message is kept as it is. */
function wording(issue: Issue): string {
  const message = issue.message;
  if (issue.code === 'invalid_type' && message.startsWith('Invalid input: expected ')) {
    if (message.endsWith('received undefined')) return `is required (expected ${issue.expected})`;
    // A query value coerced to a number that is not one.
    if (message.endsWith('received NaN'))
      return `expected ${issue.expected}, received text that is not a number`;
    return message.slice('Invalid input: '.length);
  }
  if (issue.code === 'invalid_format' && /^Invalid (UUID|GUID|ISO|email|URL)/.test(message)) {
    return FORMATS[issue.format] ?? message;
  }
  return message;
}

/** How far a branch of a union got into the value: the depth of its deepest problem. */
const depth = (issues: readonly Issue[]): number =>
  Math.max(
    0,
    ...issues.map((i) =>
      i.code === 'invalid_union' ? i.path.length + 1 + Math.max(0, ...i.errors.map(depth)) : i.path.length,
    ),
  );

/** The JSON types a union accepts, when every branch refused the value's type itself; undefined otherwise. */
function acceptedTypes(branches: readonly (readonly Issue[])[]): string[] | undefined {
  const types: string[] = [];
  for (const branch of branches) {
    for (const issue of branch) {
      if (issue.path.length) return undefined;
      if (issue.code === 'invalid_type') types.push(issue.expected);
      else if (issue.code === 'invalid_union') {
        const inner = acceptedTypes(issue.errors);
        if (!inner) return undefined;
        types.push(...inner);
      } else return undefined;
    }
  }
  return [...new Set(types)];
}

function problemsOf(issue: Issue, base: readonly PropertyKey[]): Problem[] {
  const path = [...base, ...issue.path];
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => ({ path: [...path, key], message: 'is not a field of this request' }));
  }
  if (issue.code === 'invalid_union' && issue.errors.length) {
    const types = acceptedTypes(issue.errors);
    if (types) return [{ path, message: `expected one of: ${types.join(', ')}` }];
    // The branch the value got furthest into is the one it was meant for: its problems are the useful ones.
    const depths = issue.errors.map(depth);
    const best = Math.max(...depths);
    const meant = issue.errors.filter((_, i) => depths[i] === best);
    if (meant.length === 1) return (meant[0] as Issue[]).flatMap((i) => problemsOf(i, path));
    const forms = meant.map((branch) =>
      branch
        .flatMap((i) => problemsOf(i, []))
        .map((p) => `${pathText(p.path).replace(/^\./, '') || 'the value'}: ${p.message}`)
        .join(', '),
    );
    return [{ path, message: `matches none of its accepted forms: (${forms.join(') or (')})` }];
  }
  return [{ path, message: wording(issue) }];
}

const LISTED = 5;

/**
 * The message of a failed validation of one part of a request: up to five problems, `<field>: <problem>` each. When
 * the problems are in items of a top-level array of the body (a batch of events or records), it starts with the
 * index of the first invalid item and how many are invalid.
 */
export function describeIssues(issues: readonly Issue[], part: RequestPart, input: unknown): string {
  const problems = issues.flatMap((issue) => problemsOf(issue, []));
  const listed = problems.slice(0, LISTED).map((p) => `${fieldName(part, p.path)}: ${p.message}`);
  if (problems.length > LISTED) listed.push(`and ${problems.length - LISTED} more`);
  return `${batchSummary(problems, part, input)}${listed.join('; ')}`;
}

function batchSummary(problems: readonly Problem[], part: RequestPart, input: unknown): string {
  const first = problems.find((p) => p.path.length >= 2 && typeof p.path[1] === 'number');
  if (part !== 'body' || !first || typeof input !== 'object' || input === null) return '';
  const key = first.path[0] as string;
  const items = (input as Record<string, unknown>)[key];
  if (!Array.isArray(items)) return '';
  const invalid = new Set(
    problems
      .filter((p) => p.path[0] === key && typeof p.path[1] === 'number')
      .map((p) => p.path[1] as number),
  );
  const index = Math.min(...invalid);
  return `The first invalid item of ${key} is ${key}[${index}] (index ${index}; ${invalid.size} of ${items.length} invalid). `;
}

/** Validates one part of a request with its schema: the parsed value, or 400 validation_failed naming the fields. */
/** The path of the first string (or member name) in `value` that holds U+0000, if any. */
export function findNul(value: unknown, path: PropertyKey[] = []): PropertyKey[] | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? path : undefined;
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const found = findNul(item, [...path, i]);
      if (found) return found;
    }
    return undefined;
  }
  if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (key.includes('\u0000')) return [...path, key];
      const found = findNul(item, [...path, key]);
      if (found) return found;
    }
  }
  return undefined;
}

/**
 * Validates one part of the request with its schema. First, one rule for every route: no string may hold U+0000,
 * which PostgreSQL text and jsonb cannot store (400 naming the field). `nulAllowed` leaves a part to its schema:
 * the query of the two admin lists whose spec lists no 400, where such a filter matches nothing (textEquals).
 */
export function parsePart(
  schema: z.ZodType | undefined,
  value: unknown,
  part: RequestPart,
  options: { nulAllowed?: boolean } = {},
): unknown {
  if (!schema) return undefined;
  const nul = options.nulAllowed ? undefined : findNul(value);
  if (nul) throw invalidField(part, nul, 'must not contain the NUL character (U+0000)');
  const result = schema.safeParse(value);
  if (!result.success) throw validationFailed(describeIssues(result.error.issues, part, value));
  return result.data;
}
