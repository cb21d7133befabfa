// The service's error vocabulary: what went wrong, in the spec's terms and without HTTP. The domain, sign-in, device
// and database layers throw these; one table at the edge (shared/core/http/middleware/error-response.ts) turns a kind into
// a status and the `{error, message}` body, and a route whose spec lists other statuses says so in its row
// (RouteSpec.statusOf). `code` is the stable snake_case code clients branch on; `message` is a sentence for a person.

export type ErrorKind =
  /** The request is malformed, or asks for something its own content rules out (400). */
  | 'invalid'
  /** No credentials, or credentials that prove nothing (401). */
  | 'unauthenticated'
  /** Someone known, without the right to do this (403). */
  | 'forbidden'
  /** No such thing, or none the caller may know of (404). */
  | 'not_found'
  /** The thing is not in a state that allows this (409). */
  | 'conflict'
  /** The request is larger than allowed (413). */
  | 'too_large'
  /** The body is in an encoding the route does not take (415: a charset other than UTF-8). */
  | 'unsupported_media_type'
  /** Well-formed, but contradicting an earlier request (422: an idempotency key reused with another body). */
  | 'unprocessable'
  /** Too many attempts; retry after the given time (429). */
  | 'rate_limited'
  /** A dependency answered with an error (502). */
  | 'dependency_failed'
  /** A dependency is down or busy; retrying later succeeds (503). */
  | 'dependency_unavailable'
  /** A fault of ours (500): nothing about it reaches the caller. */
  | 'internal';

export class ServiceError extends Error {
  override name = 'ServiceError';
  readonly kind: ErrorKind;
  readonly code: string;
  /** When retrying may succeed, in seconds (Retry-After). */
  readonly retryAfterSeconds: number | undefined;

  constructor(kind: ErrorKind, code: string, message: string, retryAfterSeconds?: number) {
    super(message);
    this.kind = kind;
    this.code = code;
    this.retryAfterSeconds = retryAfterSeconds;
  }

  toJSON(): { error: string; message: string } {
    return { error: this.code, message: this.message };
  }
}

export const invalid = (code: string, message: string) => new ServiceError('invalid', code, message);
export const validationFailed = (message: string) => invalid('validation_failed', message);
export const unauthenticated = (
  message = 'Sign in first: send Authorization: Bearer <token>.',
  code = 'unauthorized',
) => new ServiceError('unauthenticated', code, message);
export const forbidden = (
  message = 'Your account does not have the role this endpoint needs.',
  code = 'forbidden',
) => new ServiceError('forbidden', code, message);
export const notFound = (message = 'Not found.', code = 'not_found') =>
  new ServiceError('not_found', code, message);
export const conflict = (code: string, message: string) => new ServiceError('conflict', code, message);
export const tooLarge = (code: string, message: string) => new ServiceError('too_large', code, message);
export const unsupportedMediaType = (code: string, message: string) =>
  new ServiceError('unsupported_media_type', code, message);
export const unprocessable = (code: string, message: string) =>
  new ServiceError('unprocessable', code, message);
export const rateLimited = (code: string, message: string, retryAfterSeconds: number) =>
  new ServiceError('rate_limited', code, message, retryAfterSeconds);
export const dependencyFailed = (code: string, message: string) =>
  new ServiceError('dependency_failed', code, message);
/** How long to wait before retrying after a 503: the Retry-After of each (the health check's too). */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;
/** A dependency is down or busy: retrying later succeeds, so the answer says when (RFC 9110 Retry-After). */
export const dependencyUnavailable = (
  code: string,
  message: string,
  retryAfterSeconds = UNAVAILABLE_RETRY_AFTER_SECONDS,
) => new ServiceError('dependency_unavailable', code, message, retryAfterSeconds);
export const databaseUnavailable = () =>
  dependencyUnavailable(
    'database_unavailable',
    'The database is unavailable right now; retry in a few seconds.',
  );
export const databaseBusy = (
  message = 'The database did not complete the request in time (a timeout, a lock or a conflict); retry in a few seconds.',
) => dependencyUnavailable('database_busy', message);
export const internalError = () =>
  new ServiceError(
    'internal',
    'internal_error',
    'Something went wrong on our side; the request id in x-request-id identifies it.',
  );

/** Where a field is: the JSON body, the query string, or the path. */
export type RequestPart = 'body' | 'query' | 'path';

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$-]*$/;

/** `.events[3].tool`: each member (`["odd key"]` when it is not a plain name) or index of a path. */
export function pathText(path: ReadonlyArray<PropertyKey>): string {
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
): ServiceError => validationFailed(`${fieldName(part, path)}: ${problem}`);
