// A Content-Type header read as RFC 9110 says (type/subtype; name=value, names and the type case-insensitive, a value
// quoted or not), for the charset a request declares and for the gateway's text-or-binary rule (local-server).

export interface MediaType {
  /** `type/subtype`, lower case. */
  essence: string;
  /** Parameters by lower-case name, values unquoted. */
  params: Record<string, string>;
}

const PARAMETER = /^\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^;]*?)\s*$/;

/** The media type of a Content-Type header; undefined when there is none. */
export function mediaType(header: string | undefined): MediaType | undefined {
  if (header === undefined) return undefined;
  const [essence = '', ...rest] = header.split(';');
  const params: Record<string, string> = {};
  for (const part of rest) {
    const m = PARAMETER.exec(part);
    if (!m) continue;
    const raw = m[2] as string;
    params[(m[1] as string).toLowerCase()] = raw.startsWith('"')
      ? raw.slice(1, -1).replace(/\\(.)/g, '$1')
      : raw;
  }
  return { essence: essence.trim().toLowerCase(), params };
}

/** UTF-8 by any of the names RFC 9110 senders use for it (`utf-8`, `UTF8`). */
export const isUtf8Charset = (charset: string): boolean => /^utf-?8$/i.test(charset.trim());
