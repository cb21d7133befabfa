import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';

/** What a handler returns. `envelope` wraps the body as {success: true, data}. */
export interface Reply {
  status: number;
  body?: unknown;
  envelope: boolean;
  headers?: Record<string, string>;
  /** A body that is not JSON: sent as it is (a string), with this content type. */
  contentType?: string;
}

/** Success in the envelope of the admin and request endpoints: {success: true, data}. */
export const ok = (data: unknown, status = 200): Reply => ({ status, body: data, envelope: true });
export const created = (data: unknown): Reply => ok(data, 201);
/** A flat body, for the endpoints the spec gives without the envelope (devices, catalog update, health). */
export const flat = (body: unknown, status = 200, headers?: Record<string, string>): Reply => ({
  status,
  body,
  envelope: false,
  ...(headers ? { headers } : {}),
});
export const redirect = (location: string): Reply => ({
  status: 302,
  envelope: false,
  headers: { location, 'cache-control': 'no-store' },
});
/** A body that is not JSON (a page, a script), sent as it is. */
export const text = (body: string, contentType: string, headers?: Record<string, string>): Reply => ({
  status: 200,
  body,
  envelope: false,
  contentType,
  ...(headers ? { headers } : {}),
});

/** A handler's reply as the HTTP answer: JSON (in the envelope when it has one), or a page or script as it is. */
export function toHttpResult(reply: Reply): APIGatewayProxyStructuredResultV2 {
  const headers = { ...(reply.headers ?? {}) };
  if (reply.contentType) {
    return {
      statusCode: reply.status,
      headers: { 'content-type': reply.contentType, ...headers },
      body: String(reply.body),
    };
  }
  const body = reply.envelope ? { success: true, data: reply.body } : reply.body;
  if (body === undefined) return { statusCode: reply.status, headers };
  return {
    statusCode: reply.status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
    body: JSON.stringify(body),
  };
}
