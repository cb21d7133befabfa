// Structured JSON logs, one object per line, in the shape of Powertools for AWS Lambda's Logger, so that the
// CloudWatch Logs Insights queries written for it work here: level (DEBUG, INFO, WARN, ERROR), message, timestamp,
// service, and on every line of an invocation cold_start, function_name, function_memory_size, function_arn,
// function_request_id, xray_trace_id (when X-Ray is on) and correlation_id (the request id the caller sees as
// x-request-id). Keys that can carry secrets are redacted wherever they appear, at any depth.
//
// Why not @aws-lambda-powertools/logger itself: its cost to every function's cold start, measured against this
// module, is in docs/benchmarks.md (Bundles).
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
/** The least severe level written from now on; returns the one before, for a test to put back. */
export function setLogLevel(level: Level): Level {
  const prev = minLevel;
  minLevel = level;
  return prev;
}

export function createLogger(bindings: Fields = {}): Logger {
  const write = (level: Level, message: string, fields?: Fields) => {
    if (ORDER[level] < ORDER[minLevel]) return;
    const record = {
      level: level.toUpperCase(),
      message,
      timestamp: new Date().toISOString(),
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

/** What a Lambda invocation's context says about it (the fields of Powertools' Logger.addContext). */
export interface InvocationFacts {
  functionName?: string;
  memoryLimitInMB?: string | number;
  invokedFunctionArn?: string;
  awsRequestId?: string;
}

let coldStart = true;

/**
 * The fields bound on every line of an invocation: the Lambda context's (when there is one), cold_start (true for
 * the first invocation of this process only), the X-Ray trace id, and correlation_id.
 */
export function invocationFields(lambda: InvocationFacts | undefined, correlationId: string): Fields {
  const first = coldStart;
  coldStart = false;
  const trace = process.env._X_AMZN_TRACE_ID?.match(/Root=([^;]+)/)?.[1];
  return {
    cold_start: first,
    ...(lambda?.functionName
      ? {
          function_name: lambda.functionName,
          function_memory_size: Number(lambda.memoryLimitInMB),
          function_arn: lambda.invokedFunctionArn,
          function_request_id: lambda.awsRequestId,
        }
      : {}),
    ...(trace ? { xray_trace_id: trace } : {}),
    correlation_id: correlationId,
  };
}

export const rootLogger = createLogger({ service: 'agent-control-plane' });

/** The logger of one invocation of a scheduled function: its Lambda context's fields, correlated by its request id. */
export const invocationLogger = (lambda: InvocationFacts | undefined): Logger =>
  rootLogger.child(invocationFields(lambda, lambda?.awsRequestId ?? crypto.randomUUID()));
