// The text of a request is UTF-8, or it is refused: never decoded with U+FFFD in place of what it held. The one
// strict decoder of the request's bytes (the body, percent-encoded query and path text), and where in a JSON body
// the first bytes that are not UTF-8 are, so that the refusal can name the field.

// A BOM is kept (ignoreBOM): a body that starts with one is not JSON, as it was not before.
const STRICT = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The bytes as text; undefined when they are not UTF-8. */
export function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return STRICT.decode(bytes);
  } catch {
    return undefined;
  }
}

/** The first bytes that are not UTF-8: where they start, and the first of them. */
export interface InvalidUtf8 {
  offset: number;
  byte: number;
}

/**
 * The length of the UTF-8 sequence at `i` when it is valid (RFC 3629: no overlong forms, no surrogates, nothing past
 * U+10FFFF), else 0.
 */
function sequenceAt(bytes: Uint8Array, i: number): number {
  const b0 = bytes[i] as number;
  if (b0 < 0x80) return 1;
  const continuation = (k: number, low = 0x80, high = 0xbf) => {
    const b = bytes[i + k];
    return b !== undefined && b >= low && b <= high;
  };
  if (b0 >= 0xc2 && b0 <= 0xdf) return continuation(1) ? 2 : 0;
  if (b0 >= 0xe0 && b0 <= 0xef) {
    const [low, high] = b0 === 0xe0 ? [0xa0, 0xbf] : b0 === 0xed ? [0x80, 0x9f] : [0x80, 0xbf];
    return continuation(1, low, high) && continuation(2) ? 3 : 0;
  }
  if (b0 >= 0xf0 && b0 <= 0xf4) {
    const [low, high] = b0 === 0xf0 ? [0x90, 0xbf] : b0 === 0xf4 ? [0x80, 0x8f] : [0x80, 0xbf];
    return continuation(1, low, high) && continuation(2) && continuation(3) ? 4 : 0;
  }
  return 0;
}

/** Where the bytes stop being UTF-8; undefined when they are UTF-8 throughout. */
export function firstInvalidUtf8(bytes: Uint8Array): InvalidUtf8 | undefined {
  for (let i = 0; i < bytes.length; ) {
    const n = sequenceAt(bytes, i);
    if (!n) return { offset: i, byte: bytes[i] as number };
    i += n;
  }
  return undefined;
}

// Each byte that is not part of a UTF-8 sequence is read as a lone low surrogate of its own (U+DC80..U+DCFF, as
// Python's surrogateescape does): a mark that no UTF-8 text can hold, so the parsed JSON shows which string held it.
const MARK_BASE = 0xdc00;
const MARK = /(?<![\ud800-\udbff])[\udc80-\udcff]/;

function decodeMarked(bytes: Uint8Array): string {
  let text = '';
  let from = 0;
  for (let i = 0; i < bytes.length; ) {
    const n = sequenceAt(bytes, i);
    if (n) {
      i += n;
      continue;
    }
    text += STRICT.decode(bytes.subarray(from, i)) + String.fromCharCode(MARK_BASE + (bytes[i] as number));
    i += 1;
    from = i;
  }
  return text + STRICT.decode(bytes.subarray(from));
}

/**
 * The path to the first string or member name of a JSON body that holds bytes that are not UTF-8 ([] when the body
 * is no JSON, or they cannot be tied to one), with where they start.
 */
export function invalidUtf8InJson(bytes: Uint8Array): { path: PropertyKey[]; at: InvalidUtf8 } | undefined {
  const at = firstInvalidUtf8(bytes);
  if (!at) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(decodeMarked(bytes));
  } catch {
    return { path: [], at };
  }
  const stack: Array<{ value: unknown; path: PropertyKey[] }> = [{ value: parsed, path: [] }];
  while (stack.length) {
    const { value, path } = stack.pop() as { value: unknown; path: PropertyKey[] };
    if (typeof value === 'string') {
      if (MARK.test(value)) return { path, at };
      continue;
    }
    if (!value || typeof value !== 'object') continue;
    const entries: Array<[PropertyKey, unknown]> = Array.isArray(value)
      ? [...value.entries()]
      : Object.entries(value);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, item] = entries[i] as [PropertyKey, unknown];
      if (typeof key === 'string' && MARK.test(key)) return { path: [...path, key], at };
      stack.push({ value: item, path: [...path, key] });
    }
  }
  return { path: [], at };
}

/** What a percent-encoded text holds that is not percent-encoded UTF-8 (`%ZZ`, `%FF`, `%ED%A0%80`); undefined if none. */
export function undecodablePercent(text: string): string | undefined {
  if (!text.includes('%')) return undefined;
  try {
    decodeURIComponent(text);
    return undefined;
  } catch {
    // The first escape that is malformed, or the first run of escapes that is not UTF-8.
    const malformed = /%(?![0-9A-Fa-f]{2})/.exec(text);
    const runs = text.match(/(?:%[0-9A-Fa-f]{2})+/g) ?? [];
    const bad = runs.find((run) => {
      try {
        decodeURIComponent(run);
        return false;
      } catch {
        return true;
      }
    });
    if (bad && (!malformed || text.indexOf(bad) < malformed.index)) return bad.slice(0, 24);
    return malformed ? text.slice(malformed.index, malformed.index + 3) : text.slice(0, 24);
  }
}
