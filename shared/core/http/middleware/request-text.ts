// Bytes in are bytes stored: the text of a request (its body, its query) is UTF-8, decoded strictly here, or the
// request is refused naming the field; nothing later sees a U+FFFD put in place of what was sent.
// - The charset a body declares is UTF-8 (`utf-8`, `utf8`) or none: else 415 unsupported_charset naming the header
//   (400 on a route whose spec lists no 415, or that takes no body).
// - A body API Gateway passed base64-encoded (it does for every content type but a few text ones, and for a charset
//   other than UTF-8) is decoded strictly; bytes that are not UTF-8 are 400 naming the field that holds them.
// - A body passed as text is checked against the Content-Length the client sent: a gateway that put U+FFFD in place
//   of bytes that are not UTF-8 changed its length (docs/api.md, "Text is UTF-8").
// - The query is read from rawQueryString (as sent, still percent-encoded; queryStringParameters is already decoded):
//   an escape that is not percent-encoded UTF-8 (`%FF`, `%ZZ`) is 400 naming the parameter.
// context.rawBody is the body text, for the device signature (over the bytes as received).
import { invalid, unsupportedMediaType } from '../../errors.ts';
import { isUtf8Charset, mediaType } from '../content-type.ts';
import { errorStatuses, type RouteSpec } from '../route.ts';
import { invalidUtf8InJson, undecodablePercent } from '../utf8.ts';
import { invalidField } from '../validation.ts';
import type { ServiceMiddleware } from './types.ts';

const hex = (byte: number) => `0x${byte.toString(16).toUpperCase().padStart(2, '0')}`;

/** The name of a query parameter as sent (decoded when it can be), for the message. */
function parameterName(raw: string): PropertyKey[] {
  try {
    return [decodeURIComponent(raw.replace(/\+/g, ' '))];
  } catch {
    return [];
  }
}

/** The first parameter of a raw query string that is not percent-encoded UTF-8, and what in it is not. */
export function undecodableQuery(
  rawQuery: string | undefined,
): { path: PropertyKey[]; what: string } | undefined {
  if (!rawQuery) return undefined;
  for (const pair of rawQuery.split('&')) {
    const at = pair.indexOf('=');
    const [name, value] = at < 0 ? [pair, ''] : [pair.slice(0, at), pair.slice(at + 1)];
    const inName = undecodablePercent(name);
    if (inName) return { path: [], what: `a parameter name holds ${inName}` };
    const inValue = undecodablePercent(value);
    if (inValue) return { path: parameterName(name), what: inValue };
  }
  return undefined;
}

export function requestText(route: RouteSpec): ServiceMiddleware {
  // A charset the route does not take: 415 where the route documents it, else 400.
  const answers415 = Boolean(route.body) && errorStatuses(route).includes(415);
  return {
    name: 'requestText',
    before: async ({ event, context }) => {
      const headers = event.headers ?? {};
      const body = event.body ?? '';
      if (body !== '') {
        const charset = mediaType(headers['content-type'])?.params.charset;
        if (charset !== undefined && !isUtf8Charset(charset)) {
          const message = `Content-Type: charset=${charset.slice(0, 40)} is not taken: send the body as UTF-8 (Content-Type: application/json, or application/json; charset=utf-8).`;
          throw answers415
            ? unsupportedMediaType('unsupported_charset', message)
            : invalid('unsupported_charset', message);
        }
      }
      const query = undecodableQuery(event.rawQueryString);
      if (query) throw invalidField('query', query.path, `is not percent-encoded UTF-8 (${query.what})`);
      if (!route.body || body === '') return;

      let text: string;
      if (event.isBase64Encoded) {
        const bytes = Buffer.from(body, 'base64');
        const bad = invalidUtf8InJson(bytes);
        if (bad) {
          throw invalidField(
            'body',
            bad.path,
            `is not valid UTF-8 (byte ${hex(bad.at.byte)} at offset ${bad.at.offset} of the body): send text as UTF-8`,
          );
        }
        text = bytes.toString('utf8');
      } else {
        text = body;
        const declared = Number(headers['content-length']);
        // Measured once already, by requestContext.
        const received = context.rawBodyBytes ?? Buffer.byteLength(text, 'utf8');
        if (headers['content-length'] !== undefined && Number.isInteger(declared) && declared !== received) {
          throw invalidField(
            'body',
            [],
            `is not valid UTF-8: Content-Length says ${declared} bytes were sent, ${received} arrived as text (bytes that are not UTF-8 were replaced on the way)`,
          );
        }
      }
      event.body = text;
      event.isBase64Encoded = false;
      context.rawBody = text;
    },
  };
}
