// The body as JSON (context.parsedBody), for the routes that take one. An absent body is left absent (optional
// bodies: approve notes, revoke reason); a route without a body schema ignores what is sent (a GET with content
// cannot answer 400 invalid_json). The body text itself stays in context.rawBody: device signatures are checked over it.
import httpJsonBodyParser from '@middy/http-json-body-parser';
import { invalid } from '../../errors.ts';
import type { RouteSpec } from '../route.ts';
import type { ServiceMiddleware, ServiceRequest } from './types.ts';

/** The content types middy's JSON body parser accepts (@middy/util jsonContentTypePattern). */
const JSON_CONTENT_TYPE = /^application\/([a-z0-9.+-]+\+)?json(;|$)/i;
const MAY_SPELL_FORBIDDEN_KEY = /__proto__|constructor|\\u/;

/** middy's parser (content type, base64, no __proto__ or constructor keys), its errors in the service's words. */
async function parseWithMiddy(request: ServiceRequest): Promise<unknown> {
  try {
    await httpJsonBodyParser().before?.(request as never);
  } catch (err) {
    const status = (err as { statusCode?: number }).statusCode;
    throw status === 415
      ? invalid('invalid_content_type', 'Send the body as JSON with Content-Type: application/json.')
      : invalid('invalid_json', 'The request body is not valid JSON.');
  }
  return request.event.body;
}

export function jsonBody(route: RouteSpec): ServiceMiddleware {
  return {
    name: 'jsonBody',
    before: async (request) => {
      const { event, context } = request;
      const body = event.body;
      if (body === undefined || body === null || body === '' || !route.body) return;
      // middy's parser refuses __proto__ / constructor keys through a JSON.parse reviver, which makes parsing a large
      // batch several times slower. A body whose text cannot spell such a key (neither word, no \u escape) is parsed
      // plainly; anything else, and any error, goes through middy's parser and its error reporting.
      const contentType = event.headers?.['content-type'] ?? event.headers?.['Content-Type'];
      if (
        !event.isBase64Encoded &&
        JSON_CONTENT_TYPE.test(contentType ?? '') &&
        !MAY_SPELL_FORBIDDEN_KEY.test(body)
      ) {
        try {
          context.parsedBody = JSON.parse(body);
          return;
        } catch {
          // reported by middy's parser below
        }
      }
      context.parsedBody = await parseWithMiddy(request);
    },
  };
}
