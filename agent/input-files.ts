// The files a person hands the CLI (agents.json, events.ndjson): read and parsed, and when that fails, one message
// that names the file, the line and the column, never the file's content (an event may hold what it must not echo).

export class InputFileError extends Error {
  override name = 'InputFileError';
}

const END = 'Unexpected end of JSON input';

/** Line and column (from 1) of `offset` in `text`. */
function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return { line, column: offset - before.lastIndexOf('\n') };
}

/**
 * Where JSON.parse gave up in `text`. V8 says "at position N" for most errors; for an unexpected token it does not,
 * so the offset is found as the shortest prefix that fails before its end (a binary search: every longer prefix
 * fails there too).
 */
function errorOffset(text: string, message: string): number {
  const at = /at position (\d+)/.exec(message);
  if (at) return Number(at[1]);
  if (message === END) return text.length;
  let good = 0;
  let bad = text.length;
  while (bad - good > 1) {
    const mid = (good + bad) >> 1;
    try {
      JSON.parse(text.slice(0, mid));
      good = mid;
    } catch (err) {
      // A prefix that fails only where it ends is a valid beginning.
      const text = (err as Error).message;
      const at = /at position (\d+)/.exec(text);
      if (text === END || (at && Number(at[1]) >= mid)) good = mid;
      else bad = mid;
    }
  }
  return bad - 1;
}

/** V8's wording, without the excerpt of the input it quotes for an unexpected token, and without its position. */
const wording = (message: string) =>
  message
    .replace(/, ".*" is not valid JSON$/s, '')
    .replace(/ in JSON at position \d+.*$/s, '')
    .replace(/^Unexpected end of JSON input$/, 'the JSON ends too soon');

/** `text` parsed as JSON; a syntax error names `name:line:column` and what was wrong there. */
export function parseJsonText(text: string, name: string, firstLine = 1): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    const message = (err as Error).message;
    const { line, column } = lineAndColumn(text, errorOffset(text, message));
    throw new InputFileError(
      `${name}:${firstLine + line - 1}:${column}: not valid JSON: ${wording(message)}`,
    );
  }
}

async function readText(path: string): Promise<string> {
  const { readFileSync } = await import('node:fs');
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EACCES'
          ? 'permission denied'
          : code === 'EISDIR'
            ? 'it is a directory'
            : (err as Error).message;
    throw new InputFileError(`cannot read ${path}: ${why}`);
  }
}

/** A JSON file, parsed. */
export async function readJsonFile(path: string): Promise<unknown> {
  return parseJsonText(await readText(path), path);
}

/** An NDJSON file: one JSON value per non-blank line, with each value's line number (from 1). */
export async function readNdjsonFile(path: string): Promise<{ values: unknown[]; lines: number[] }> {
  const values: unknown[] = [];
  const lines: number[] = [];
  (await readText(path)).split('\n').forEach((text, i) => {
    if (!text.trim()) return;
    values.push(parseJsonText(text, path, i + 1));
    lines.push(i + 1);
  });
  return { values, lines };
}
