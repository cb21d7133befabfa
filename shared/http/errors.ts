/**
 * The error model: every failing request answers `{error, message}` where `error` is a stable snake_case code and
 * `message` a sentence for a person. Handlers and domain code throw these; one place (http/handler.ts) turns them
 * into responses.
 */
export class HttpError extends Error {
  override name = 'HttpError';
  readonly status: number;
  readonly code: string;
  readonly headers: Record<string, string>;

  constructor(status: number, code: string, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.status = status;
    this.code = code;
    this.headers = headers;
  }

  toJSON(): { error: string; message: string } {
    return { error: this.code, message: this.message };
  }
}

export const badRequest = (code: string, message: string) => new HttpError(400, code, message);
export const validationFailed = (message: string) => new HttpError(400, 'validation_failed', message);
export const unauthorized = (
  message = 'Sign in first: send Authorization: Bearer <token>.',
  code = 'unauthorized',
) => new HttpError(401, code, message, { 'www-authenticate': 'Bearer' });
export const forbidden = (message = 'Your account does not have the role this endpoint needs.') =>
  new HttpError(403, 'forbidden', message);
export const notFound = (message = 'Not found.') => new HttpError(404, 'not_found', message);
export const conflict = (code: string, message: string) => new HttpError(409, code, message);
export const payloadTooLarge = (code: string, message: string) => new HttpError(413, code, message);
export const badGateway = (code: string, message: string) => new HttpError(502, code, message);
/** A dependency is down or busy: retrying later succeeds, so the answer says when (RFC 9110 Retry-After). */
export const serviceUnavailable = (code: string, message: string, retryAfterSeconds = 5) =>
  new HttpError(503, code, message, { 'retry-after': String(retryAfterSeconds) });
export const databaseUnavailable = () =>
  serviceUnavailable(
    'database_unavailable',
    'The database is unavailable right now; retry in a few seconds.',
  );
export const databaseBusy = (
  message = 'The database did not complete the request in time (a timeout, a lock or a conflict); retry in a few seconds.',
) => serviceUnavailable('database_busy', message);
export const internalError = () =>
  new HttpError(
    500,
    'internal_error',
    'Something went wrong on our side; the request id in x-request-id identifies it.',
  );
