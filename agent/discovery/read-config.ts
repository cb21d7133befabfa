// Reads the clients' config files: JSON with comments and trailing commas (VS Code, Zed and others write JSONC) and
// TOML (Codex). A file that is absent is skipped quietly; one that cannot be read or parsed is a warning naming the
// file and the line, and is skipped: the scan goes on with the other files.
import { readFile } from 'node:fs/promises';
import { type ParseError, parse as parseJsonc, printParseErrorCode } from 'jsonc-parser';
import { parse as parseToml, TomlError } from 'smol-toml';
import type { ConfigFile, ScanWarning } from './types.ts';

/** Config files beyond this size are not read (Claude Code's ~/.claude.json grows with history; it stays well below). */
const MAX_BYTES = 64 * 1024 * 1024;

export type ReadOutcome =
  | { state: 'absent' }
  | { state: 'read'; document: unknown }
  | { state: 'failed'; warning: ScanWarning };

function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { line, column: offset - lineStart + 1 };
}

export function parseDocument(text: string, file: ConfigFile): ReadOutcome {
  if (file.format === 'toml') {
    try {
      return { state: 'read', document: parseToml(text) };
    } catch (err) {
      const warning: ScanWarning = { file: file.path, message: `not valid TOML: ${firstLine(err)}` };
      if (err instanceof TomlError) Object.assign(warning, { line: err.line, column: err.column });
      return { state: 'failed', warning };
    }
  }
  // Most files are plain JSON, which the engine's own parser reads several times faster; JSONC only if it is not.
  try {
    return { state: 'read', document: JSON.parse(text) };
  } catch {}
  const errors: ParseError[] = [];
  const document = parseJsonc(text, errors, { allowTrailingComma: true, allowEmptyContent: true });
  const [error] = errors;
  if (error) {
    return {
      state: 'failed',
      warning: {
        file: file.path,
        ...lineAndColumn(text, error.offset),
        message: `not valid JSON: ${printParseErrorCode(error.error)}`,
      },
    };
  }
  return { state: 'read', document };
}

const firstLine = (err: unknown) => String((err as Error).message ?? err).split('\n')[0];

export async function readConfig(file: ConfigFile): Promise<ReadOutcome> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file.path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { state: 'absent' };
    return {
      state: 'failed',
      warning: { file: file.path, message: `cannot be read (${code ?? firstLine(err)})` },
    };
  }
  if (bytes.length > MAX_BYTES) {
    return {
      state: 'failed',
      warning: { file: file.path, message: `not read: larger than ${MAX_BYTES / 1024 / 1024} MiB` },
    };
  }
  // A byte-order mark (Windows editors write one) is not part of the document.
  const text = bytes.toString('utf8').replace(/^\uFEFF/, '');
  return parseDocument(text, file);
}
