// The API's default route: what answers a method and path that no route-table row mounts (404 not_found), so that
// an unknown path, or a route that is not mounted (CLI sign-in without a dashboard URL), still gets {error, message}
// in AWS as it does locally. No runtime, no database: it only describes the request.
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { notFound } from '#shared/core/errors.ts';

export const handler = async (event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> => ({
  statusCode: 404,
  headers: { 'content-type': 'application/json; charset=utf-8' },
  body: JSON.stringify(
    notFound(`No route for ${event.requestContext?.http?.method ?? 'GET'} ${event.rawPath ?? '/'}.`).toJSON(),
  ),
});
