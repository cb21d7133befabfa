/**
 * RFC 8785 JSON Canonicalization Scheme (JCS): the bytes a device signs, and the form the audit hash chain hashes.
 *
 * - No whitespace (3.2.1); `null`, `true`, `false` as such (3.2.2.1).
 * - Strings (3.2.2.2): U+0000..U+001F as `\b \t \n \f \r` or lowercase `\u00hh`, `"` and `\` escaped, every other
 *   code point as is. A lone surrogate has no UTF-8 form, so it is an error (the note of 3.2.2.2).
 * - Numbers (3.2.2.3): ECMAScript Number::toString (shortest round-trip form, `-0` → `0`); NaN and ±Infinity are
 *   errors.
 * - Object members sorted by their names as arrays of UTF-16 code units (3.2.3), recursively; array order kept.
 *
 * JavaScript values that are not JSON are treated as `JSON.stringify` treats them, so that canonicalize(x) is
 * always JSON.parse-able text equal in meaning to JSON.stringify(x): members whose value is `undefined`, a function
 * or a symbol are omitted (in arrays they become `null`), `toJSON()` is honoured (Date → ISO string), boxed
 * primitives are unboxed. A BigInt, a cycle or a top-level value with no JSON form is an error, and so is nesting
 * deeper than MAX_CANONICAL_DEPTH (RFC 8259 section 9 lets an implementation bound it): the serializer recurses, and
 * the value is a request body before anything has checked it, so past the bound it is a refusal, not a stack overflow.
 */

/** Thrown for input that has no RFC 8785 form (NaN, Infinity, lone surrogates, BigInt, cycles, nesting too deep). */
export class CanonicalizationError extends TypeError {
  override name = 'CanonicalizationError';
}

const SHORT_ESCAPES: Record<number, string> = {
  8: '\\b',
  9: '\\t',
  10: '\\n',
  12: '\\f',
  13: '\\r',
  34: '\\"',
  92: '\\\\',
};

function serializeString(text: string): string {
  let out = '"';
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    let escaped: string | undefined;
    if (unit < 0x20) {
      escaped = SHORT_ESCAPES[unit] ?? `\\u${unit.toString(16).padStart(4, '0')}`;
    } else if (unit === 0x22 || unit === 0x5c) {
      escaped = SHORT_ESCAPES[unit];
    } else if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (!(next >= 0xdc00 && next <= 0xdfff)) throw loneSurrogate(unit, i);
      i++; // a valid pair is copied as is
    } else if (unit >= 0xdc00 && unit <= 0xdfff) {
      throw loneSurrogate(unit, i);
    }
    if (escaped !== undefined) {
      out += text.slice(start, i) + escaped;
      start = i + 1;
    }
  }
  return `${out}${text.slice(start)}"`;
}

const loneSurrogate = (unit: number, index: number) =>
  new CanonicalizationError(
    `JCS: the string has a lone surrogate U+${unit.toString(16).toUpperCase()} at index ${index}; ` +
      'it is not valid Unicode and has no canonical form (RFC 8785 section 3.2.2.2).',
  );

function serializeNumber(n: number): string {
  if (!Number.isFinite(n)) {
    throw new CanonicalizationError(`JCS: ${n} is not a JSON number (RFC 8785 section 3.2.2.3).`);
  }
  // ECMAScript Number::toString is exactly the serialization RFC 8785 prescribes; it renders -0 as "0".
  return String(n);
}

/** Arrays and objects nested deeper than this have no canonical form here. */
export const MAX_CANONICAL_DEPTH = 1000;

/** Code-unit order, which is what JavaScript's relational operators on strings implement. */
const byCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The value JSON.stringify would serialize for `value` (after toJSON and unboxing); `undefined` = omit. */
function jsonValue(value: unknown, key: string): unknown {
  if (value !== null && (typeof value === 'object' || typeof value === 'bigint')) {
    const toJSON = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') value = toJSON.call(value, key);
  }
  if (value instanceof Number) return Number(value);
  if (value instanceof String) return String(value);
  if (value instanceof Boolean) return value.valueOf();
  if (typeof value === 'function' || typeof value === 'symbol') return undefined;
  return value;
}

function serialize(value: unknown, stack: object[]): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      return serializeNumber(value);
    case 'string':
      return serializeString(value);
    case 'bigint':
      throw new CanonicalizationError(
        'JCS: a BigInt is not a JSON number; send it as a string (RFC 8785 appendix D).',
      );
    case 'object':
      break;
    default:
      throw new CanonicalizationError(`JCS: a ${typeof value} has no JSON form.`);
  }
  if (stack.includes(value)) throw new CanonicalizationError('JCS: the value contains a cycle.');
  if (stack.length >= MAX_CANONICAL_DEPTH) {
    throw new CanonicalizationError(`JCS: the value nests deeper than ${MAX_CANONICAL_DEPTH} levels.`);
  }
  stack.push(value);
  try {
    if (Array.isArray(value)) {
      const items: string[] = [];
      for (let i = 0; i < value.length; i++) {
        const item = jsonValue(value[i], String(i));
        items.push(item === undefined ? 'null' : serialize(item, stack));
      }
      return `[${items.join(',')}]`;
    }
    const members: string[] = [];
    for (const name of Object.keys(value).sort(byCodeUnits)) {
      const member = jsonValue((value as Record<string, unknown>)[name], name);
      if (member === undefined) continue;
      members.push(`${serializeString(name)}:${serialize(member, stack)}`);
    }
    return `{${members.join(',')}}`;
  } finally {
    stack.pop();
  }
}

/** The RFC 8785 canonical JSON text of `value`. Throws CanonicalizationError for input that has none. */
export function canonicalize(value: unknown): string {
  const root = jsonValue(value, '');
  if (root === undefined)
    throw new CanonicalizationError(`JCS: a top-level ${typeof value} has no JSON form.`);
  return serialize(root, []);
}

/** The RFC 8785 canonical form of `value` as UTF-8 bytes: what a device signs. */
export function canonicalBytes(value: unknown): Buffer {
  return Buffer.from(canonicalize(value), 'utf8');
}
