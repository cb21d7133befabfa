// Reading fields of a client's payload without trusting their types: absent and mistyped are the same.
import type { Payload } from './types.ts';

export const str = (value: unknown): string | undefined =>
  typeof value === 'string' && value.trim() !== '' ? value : undefined;

export const num = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;

export const obj = (value: unknown): Payload | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Payload) : undefined;

/** 53 bits of a string's hash (cyrb53: not cryptographic, but fast and well spread). */
function cyrb53(text: string, seed: number): number {
  let h1 = 0xdeadbeef ^ seed;
  let h2 = 0x41c6ce57 ^ seed;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

/**
 * A 16-character digest of a value (two independent 53-bit hashes), to tell calls apart without keeping what they
 * carried. Not a secret: it only keeps two pending calls from sharing a file name.
 */
export function digest(value: unknown): string {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
  const part = (seed: number) => cyrb53(text, seed).toString(36).padStart(11, '0').slice(-8);
  return `${part(1)}${part(2)}`;
}

/** A JSON string parsed when it is one (Cursor sends tool input and results as strings of JSON). */
export function parsedJson(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

/**
 * The error an MCP tool result carries (`isError: true`, with its text content), else undefined. MCP's
 * CallToolResult: https://modelcontextprotocol.io/specification/2025-06-18/server/tools#tool-result
 */
export function mcpResultError(result: unknown): string | undefined {
  const r = obj(parsedJson(result));
  if (r?.isError !== true) return undefined;
  const texts = Array.isArray(r.content)
    ? r.content.map((part) => str(obj(part)?.text)).filter((text): text is string => text !== undefined)
    : [];
  return texts.join('\n') || 'the tool reported an error';
}
