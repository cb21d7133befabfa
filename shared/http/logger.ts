// Structured JSON logs, one object per line, with the request id bound on every line of a request.
// Keys that can carry secrets are redacted wherever they appear, at any depth.
const SECRET_KEYS =
  /^(authorization|cookie|password|passwd|secret|jwt_secret|token|access_token|refresh_token|id_token|code_verifier|code|dsn|command|args|env|prompt|sql)$/i;

type Fields = Record<string, unknown>;
export type Level = 'debug' | 'info' | 'warn' | 'error';
const ORDER: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

function redact(value: unknown, depth = 0): unknown {
  if (depth > 6 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  if (value instanceof Error) return { name: value.name, message: value.message };
  const out: Fields = {};
  for (const [key, v] of Object.entries(value))
    out[key] = SECRET_KEYS.test(key) ? '[redacted]' : redact(v, depth + 1);
  return out;
}

export interface Logger {
  debug(msg: string, fields?: Fields): void;
  info(msg: string, fields?: Fields): void;
  warn(msg: string, fields?: Fields): void;
  error(msg: string, fields?: Fields): void;
  child(bindings: Fields): Logger;
}

export type LogSink = (line: string) => void;
let sink: LogSink = (line) => process.stdout.write(`${line}\n`);
let minLevel: Level = 'info';

/** Tests capture log lines with this; the local server and Lambda write to stdout (CloudWatch). */
export function setLogSink(next: LogSink): LogSink {
  const prev = sink;
  sink = next;
  return prev;
}
export function setLogLevel(level: Level): void {
  minLevel = level;
}

export function createLogger(bindings: Fields = {}): Logger {
  const write = (level: Level, msg: string, fields?: Fields) => {
    if (ORDER[level] < ORDER[minLevel]) return;
    const record = {
      time: new Date().toISOString(),
      level,
      msg,
      ...bindings,
      ...(fields ? (redact(fields) as Fields) : {}),
    };
    sink(JSON.stringify(record));
  };
  return {
    debug: (msg, fields) => write('debug', msg, fields),
    info: (msg, fields) => write('info', msg, fields),
    warn: (msg, fields) => write('warn', msg, fields),
    error: (msg, fields) => write('error', msg, fields),
    child: (more) => createLogger({ ...bindings, ...(redact(more) as Fields) }),
  };
}

export const rootLogger = createLogger({ service: 'agent-control-plane' });
