// The service's address as the agent is given it (--url, or the one saved at registration), checked before use, and
// every way of failing to reach it turned into one sentence that names the URL and says what to do.

/** A mistake in the address itself, found before any request. */
export class ServiceUrlError extends Error {
  override name = 'ServiceUrlError';
}

/** The service could not be reached, or what answered is not the service. */
export class ServiceUnreachable extends Error {
  override name = 'ServiceUnreachable';
  readonly url: string;
  /** The system's error code (ECONNREFUSED, ENOTFOUND, ...) or a word for what answered. */
  readonly reason: string;
  constructor(url: string, reason: string, message: string) {
    super(message);
    this.url = url;
    this.reason = reason;
  }
}

/**
 * The base URL of the service, checked: http or https, a host, no query or fragment, and not ending in /v1 (the
 * agent adds the /v1 of each route itself, so that would call /v1/v1/...). `from` names where it came from, for the
 * message. Trailing slashes are dropped (the same address).
 */
export function checkServiceUrl(text: string, from = '--url'): string {
  const value = text.trim();
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) {
    throw new ServiceUrlError(
      `${from} ${JSON.stringify(text)} has no scheme: use ${from === '--url' ? '--url ' : ''}http://${value.replace(/^\/+/, '')} (or https://…)`,
    );
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ServiceUrlError(`${from} ${JSON.stringify(text)} is not a URL: use --url http://host:port`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ServiceUrlError(
      `${from} ${JSON.stringify(text)} is not an http:// or https:// address: use --url http://host:port`,
    );
  }
  if (url.search || url.hash) {
    throw new ServiceUrlError(
      `${from} ${JSON.stringify(text)} has a query or fragment: give only the service's address`,
    );
  }
  const path = url.pathname.replace(/\/+$/, '');
  if (/\/v1$/i.test(path)) {
    throw new ServiceUrlError(
      `${from} ${value} ends in /v1, which the agent adds itself: use --url ${url.origin}${path.slice(0, -3)}`,
    );
  }
  return `${url.origin}${path}`;
}

/** A route of the service at `base` (which may hold a path prefix: a service behind a reverse proxy's path). */
export const endpoint = (base: string, path: string) => `${base.replace(/\/+$/, '')}${path}`;

interface SystemError {
  code?: string;
  message?: string;
  errors?: SystemError[];
  cause?: SystemError;
}

/** The system error under fetch's "fetch failed" (for a host with several addresses, the first attempt's). */
function rootCause(err: unknown): SystemError {
  let e = err as SystemError | undefined;
  for (let i = 0; i < 5 && e; i++) {
    if (e.code && e.code !== 'UND_ERR') return e;
    if (e.errors?.[0]) e = e.errors[0];
    else if (e.cause) e = e.cause;
    else break;
  }
  return e ?? {};
}

const CERTIFICATE_CODES = /CERT|SELF_SIGNED|UNABLE_TO_(VERIFY|GET)|ERR_TLS_CERT/;

/** Why `err` (thrown by fetch for a request to the service at `base`) happened, as the one sentence to print. */
export function unreachable(err: unknown, base: string, timeoutMs?: number): ServiceUnreachable {
  if (err instanceof ServiceUnreachable) return err;
  let url: URL | undefined;
  try {
    url = new URL(base);
  } catch {}
  const host = url?.hostname ?? base;
  const other = url && (url.protocol === 'https:' ? 'http' : 'https');
  const swapped = url ? `${other}://${url.host}${url.pathname.replace(/\/+$/, '')}` : base;
  const name = (err as { name?: string })?.name;
  const cause = rootCause(err);
  const code = cause.code ?? (name === 'TimeoutError' ? 'ETIMEDOUT' : '');
  const say = (why: string, hint: string) =>
    new ServiceUnreachable(base, code || 'error', `cannot reach the service at ${base} (${why}): ${hint}`);
  if (code === 'ECONNREFUSED') return say('connection refused', 'is it running? use --url');
  if (code === 'ENOTFOUND') return say(`unknown host ${host}`, 'check the host name, or use --url');
  if (code === 'EAI_AGAIN')
    return say(
      `the name ${host} could not be looked up`,
      'is this machine offline? check the network, or use --url',
    );
  if (code === 'ETIMEDOUT' || code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_HEADERS_TIMEOUT') {
    const after = timeoutMs ? `no answer within ${Math.round(timeoutMs / 1000)} s` : 'timed out';
    return say(after, 'is the host up and the port right? use --url');
  }
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH')
    return say('no route to the host', 'is this machine offline or on another network? use --url');
  if (
    code === 'ERR_SSL_WRONG_VERSION_NUMBER' ||
    code === 'EPROTO' ||
    /wrong version number/i.test(cause.message ?? '')
  )
    return say('it does not speak TLS', `is it an http service? try --url ${swapped}`);
  if (CERTIFICATE_CODES.test(code))
    return say(
      `its TLS certificate is not trusted: ${code}`,
      'if a proxy inspects TLS, set NODE_EXTRA_CA_CERTS to its CA file; or check --url',
    );
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET')
    return say(
      'the connection was closed without an answer',
      url?.protocol === 'http:'
        ? `is it an https service? try --url ${swapped}`
        : 'is the port right? use --url',
    );
  if (/bad port/i.test(cause.message ?? ''))
    return say(
      `port ${url?.port} is one that fetch refuses to use`,
      'use the port the service listens on (--url)',
    );
  return say(cause.message || (err as Error)?.message || String(err), 'use --url');
}

/**
 * What answered is not this service's API: a page, a proxy's error, another program on the port. `status` (0 when
 * unknown) and `contentType` are what it answered with.
 */
export function notTheService(
  base: string,
  path: string,
  status: number,
  contentType: string | null,
): ServiceUnreachable {
  const what = contentType ? contentType.split(';')[0] : 'no content type';
  const answer = status ? `HTTP ${status} (${what})` : what;
  return new ServiceUnreachable(
    base,
    'not_the_service',
    `the service at ${base} answered ${path} with ${answer}, not the API's JSON: is that the API's address (not the console's)? use --url`,
  );
}

/**
 * fetch, with a network failure turned into ServiceUnreachable naming `base`; requests time out after `timeoutMs`
 * (a laptop that changes networks mid-request must not wait forever).
 */
export function serviceFetch(
  base: string,
  options: { timeoutMs?: number; signal?: AbortSignal } = {},
): typeof fetch {
  const timeoutMs = options.timeoutMs ?? 30_000;
  return async (input, init) => {
    const signals = [AbortSignal.timeout(timeoutMs), options.signal, init?.signal].filter(
      (s): s is AbortSignal => !!s,
    );
    try {
      return await fetch(input, { ...init, signal: AbortSignal.any(signals) });
    } catch (err) {
      if (options.signal?.aborted || init?.signal?.aborted) throw err;
      throw unreachable(err, base, timeoutMs);
    }
  };
}

/** What a POST to the service answered: its status, a header by name, the body as text. */
export interface PostAnswer {
  status: number;
  header(name: string): string | null;
  text: string;
}

export type ServicePost = (
  url: string,
  init: { headers: Record<string, string>; body: string | Buffer; signal?: AbortSignal },
) => Promise<PostAnswer>;

/**
 * A POST through node:http / node:https rather than fetch, for the device calls: fetch's HTTP client holds tens of
 * megabytes more for a daemon that sends batches all day (bench:agent). A network failure is ServiceUnreachable
 * naming `base`; no answer within `timeoutMs` is a timeout.
 */
export function servicePost(base: string, options: { timeoutMs?: number } = {}): ServicePost {
  const timeoutMs = options.timeoutMs ?? 30_000;
  return async (url, init) => {
    const target = new URL(url);
    const { request } = target.protocol === 'https:' ? await import('node:https') : await import('node:http');
    return new Promise<PostAnswer>((resolve, reject) => {
      const fail = (err: unknown) => reject(init.signal?.aborted ? err : unreachable(err, base, timeoutMs));
      const req = request(
        target,
        {
          method: 'POST',
          headers: { ...init.headers, 'content-length': String(Buffer.byteLength(init.body)) },
          timeout: timeoutMs,
          ...(init.signal ? { signal: init.signal } : {}),
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('error', fail);
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              header: (name) => {
                const value = res.headers[name.toLowerCase()];
                return Array.isArray(value) ? value.join(', ') : (value ?? null);
              },
              text: Buffer.concat(chunks).toString('utf8'),
            }),
          );
        },
      );
      req.on('timeout', () => req.destroy(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })));
      req.on('error', fail);
      req.end(init.body);
    });
  };
}
