// The messages of 400 validation_failed (docs/api.md, "Errors"): each problem names its field, as the part of the
// request it is in followed by a dotted path with [i] indices (body.events[3].tool, query.limit, path.id), and says
// what was expected. A batch also says which of its items is the first invalid one.
import type { z } from 'zod';
import { fieldName, invalidField, pathText, type RequestPart, validationFailed } from '../errors.ts';

export { fieldName, invalidField, type RequestPart };

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

/**
 * What no string of a request may hold, in any part: U+0000, and a lone UTF-16 surrogate (`"\ud800"` in JSON: it
 * has no UTF-8 form). PostgreSQL text and jsonb can store neither, and the audit chain's canonical form (RFC 8785)
 * has no form for the second.
 */
function unstorable(text: string): string | undefined {
  if (text.includes('\u0000')) return 'must not contain the NUL character (U+0000)';
  if (text.isWellFormed()) return undefined;
  const lone = /[\ud800-\udfff]/u.exec(text)?.[0] ?? '';
  const unit = lone.charCodeAt(0).toString(16).toUpperCase();
  return `must be valid Unicode: it holds a lone surrogate (U+${unit}), which has no UTF-8 form`;
}

/**
 * How deep arrays and objects may nest in a request body, counting the body itself. The schemas need far less (the
 * free-form values are bounded at 32 levels by their own rule, JSON_LIMITS, with its own message). Deeper input is
 * valid JSON that would overflow the call stack of the validator (nested filter groups), of the canonicalizer or of
 * JSON.stringify before any schema refused it: a 500, where a refusal naming the field is due.
 */
export const MAX_NESTING = 512;
/** How much of the path to a value nested past MAX_NESTING the message names (the rest is `[0][0]…`). */
const NESTING_PATH_SHOWN = 8;

/** One value on checkShape's stack: where it is (its key in its parent), how deep, what is wrong with its key. */
interface Visit {
  value: unknown;
  depth: number;
  key?: PropertyKey;
  parent?: Visit;
  badKey?: string;
}

const pathOf = (visit: Visit): PropertyKey[] => {
  const path: PropertyKey[] = [];
  for (let v: Visit | undefined = visit; v?.key !== undefined; v = v.parent) path.push(v.key);
  return path.reverse();
};

/**
 * The first thing in `value`, in document order, that no route takes whatever its schema: a string or member name
 * holding what cannot be stored (see `unstorable`), or nesting past MAX_NESTING. Its path and the problem. A loop,
 * not a recursion, so that a body nested thousands of levels deep is refused here, not by the call stack.
 */
export function checkShape(value: unknown): { path: PropertyKey[]; problem: string } | undefined {
  const stack: Visit[] = [{ value, depth: 0 }];
  while (stack.length) {
    const visit = stack.pop() as Visit;
    if (visit.badKey) return { path: pathOf(visit), problem: visit.badKey };
    const v = visit.value;
    if (typeof v === 'string') {
      const problem = unstorable(v);
      if (problem) return { path: pathOf(visit), problem };
      continue;
    }
    if (!v || typeof v !== 'object') continue;
    const depth = visit.depth + 1;
    if (depth > MAX_NESTING) {
      return {
        path: pathOf(visit).slice(0, NESTING_PATH_SHOWN),
        problem: `nests deeper than ${MAX_NESTING} levels of arrays and objects`,
      };
    }
    const entries: Array<[PropertyKey, unknown]> = Array.isArray(v) ? [...v.entries()] : Object.entries(v);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, item] = entries[i] as [PropertyKey, unknown];
      const badKey = typeof key === 'string' ? unstorable(key) : undefined;
      stack.push({ value: item, depth, key, parent: visit, ...(badKey ? { badKey } : {}) });
    }
  }
  return undefined;
}

/**
 * Validates one part of the request with its schema. First, rules for every route (checkShape): no string may hold
 * U+0000 or a lone surrogate, which PostgreSQL text and jsonb cannot store, and nothing nests past MAX_NESTING (400
 * naming the field; on the two lenient admin lists too, which refuse no value but refuse what is no text).
 */
export function parsePart(schema: z.ZodType | undefined, value: unknown, part: RequestPart): unknown {
  if (!schema) return undefined;
  const bad = checkShape(value);
  if (bad) throw invalidField(part, bad.path, bad.problem);
  const result = schema.safeParse(value);
  if (!result.success) throw validationFailed(describeIssues(result.error.issues, part, value));
  return result.data;
}
