// A typed client of the API: openapi-fetch over the types that openapi-typescript generates from the OpenAPI
// document (client/openapi.d.ts, `npm run openapi:client`). The reference agent uses it, and so can any TypeScript
// client: what it can call is exactly what the document describes, so a change to the API that breaks a client breaks
// the type check.
import createClient, { type Client } from 'openapi-fetch';
import type { components, operations, paths } from './openapi.d.ts';

export type { components, operations, paths };
export type ApiClient = Client<paths>;

/**
 * A client of the API at `baseUrl`, sending `token` as the bearer token when given; a function is asked at each
 * request (a token that is renewed while the client lives, as the console's).
 */
export function createApiClient(
  baseUrl: string,
  options: { token?: string | (() => string | undefined); fetch?: typeof fetch } = {},
): ApiClient {
  const { token } = options;
  const client = createClient<paths>({
    baseUrl: baseUrl.replace(/\/+$/, ''),
    headers: typeof token === 'string' && token ? { authorization: `Bearer ${token}` } : {},
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  if (typeof token === 'function') {
    client.use({
      onRequest({ request }) {
        const value = token();
        if (value) request.headers.set('authorization', `Bearer ${value}`);
        return request;
      },
    });
  }
  return client;
}

type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;

/** The JSON body an operation answers with `status`. */
export type ResponseBody<
  Op extends keyof operations,
  Status extends keyof operations[Op]['responses'],
> = Json<operations[Op]['responses'][Status]>;

/** The JSON body an operation takes. */
export type RequestBody<Op extends keyof operations> = operations[Op] extends { requestBody?: infer R }
  ? Json<NonNullable<R>>
  : never;
