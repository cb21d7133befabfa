// RFC 8785 JSON Canonicalization Scheme (JCS). Used for device signatures and the audit hash chain.

/** Serializes `value` per RFC 8785: sorted keys (UTF-16 code units), ES number form, minimal escaping. */
export function canonicalize(value: unknown): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError('JCS: NaN and Infinity are not JSON');
      return JSON.stringify(value);
    case 'string':
      return JSON.stringify(value);
    case 'object': {
      if (Array.isArray(value))
        return `[${value.map((v) => (v === undefined ? 'null' : canonicalize(v))).join(',')}]`;
      const toJSON = (value as { toJSON?: () => unknown }).toJSON;
      if (typeof toJSON === 'function') return canonicalize(toJSON.call(value));
      const entries = Object.entries(value as Record<string, unknown>)
        .filter(([, v]) => v !== undefined && typeof v !== 'function')
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalize(v)}`).join(',')}}`;
    }
    default:
      throw new TypeError(`JCS: cannot serialize a ${typeof value}`);
  }
}

export const canonicalBytes = (value: unknown): Buffer => Buffer.from(canonicalize(value), 'utf8');
