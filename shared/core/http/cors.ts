// CORS is answered by API Gateway (corsPreflight on the HTTP API) in AWS, so functions never set it; the local
// server reproduces the gateway's behaviour with this one policy, built from cors.allowed_origins.
export const CORS_ALLOW_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
export const CORS_ALLOW_HEADERS = [
  'authorization',
  'content-type',
  'idempotency-key',
  'x-device-signature',
  'x-request-id',
];
export const CORS_EXPOSE_HEADERS = ['x-request-id'];
export const CORS_MAX_AGE_SECONDS = 600;

export function corsHeaders(
  allowedOrigins: readonly string[],
  origin: string | undefined,
): Record<string, string> {
  if (!origin) return {};
  const allowed = allowedOrigins.includes('*') || allowedOrigins.includes(origin);
  if (!allowed) return {};
  return {
    'access-control-allow-origin': allowedOrigins.includes('*') ? '*' : origin,
    'access-control-expose-headers': CORS_EXPOSE_HEADERS.join(','),
    vary: 'origin',
  };
}

export function preflightHeaders(
  allowedOrigins: readonly string[],
  origin: string | undefined,
): Record<string, string> {
  const base = corsHeaders(allowedOrigins, origin);
  if (!base['access-control-allow-origin']) return {};
  return {
    ...base,
    'access-control-allow-methods': CORS_ALLOW_METHODS.join(','),
    'access-control-allow-headers': CORS_ALLOW_HEADERS.join(','),
    'access-control-max-age': String(CORS_MAX_AGE_SECONDS),
  };
}
