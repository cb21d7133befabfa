// Reading fields of a client's payload without trusting their types: absent and mistyped are the same.
import { createHash } from 'node:crypto';
import type { Payload } from './types.ts';

export const str = (value: unknown): string | undefined =>
  typeof value === 'string' && value.trim() !== '' ? value : undefined;

export const num = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;

export const obj = (value: unknown): Payload | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Payload) : undefined;

/** A short digest of a value, to tell calls apart without keeping what they carried. */
export function digest(value: unknown): string {
  return createHash('sha256')
    .update(typeof value === 'string' ? value : (JSON.stringify(value) ?? ''))
    .digest('base64url')
    .slice(0, 16);
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
