// One interface for the environments a request runs in. `builtin` provisions inside the service's own PostgreSQL;
// `http` asks an external environment service. The lifecycle (shared/domain/requests-lifecycle.ts) only sees this.
import type { Config } from '../../config/schema.ts';
import type { Database } from '../../db/database.ts';
import type { TunnelView } from '../../schemas/requests.ts';
import type { RequestRow } from '../requests.ts';

/** What running a query needs to know of the request. */
export type QueryTarget = Pick<RequestRow, 'id' | 'environmentId'>;

export interface QueryLimits {
  statementTimeoutMs: number;
  maxRows: number;
  maxBytes: number;
}

export interface QueryResult {
  columns: Array<{ name: string; type: string }>;
  rows: unknown[][];
  row_count: number;
  truncated: boolean;
  duration_ms: number;
}

export interface Provisioned {
  environmentId: string;
  tunnel: TunnelView;
}

export interface EnvironmentProvider {
  readonly name: 'builtin' | 'http';
  /** Creates the environment of an approved request; throws on failure (the lifecycle records it). */
  provision(request: RequestRow): Promise<Provisioned>;
  /** Removes it; idempotent (tearing down what is gone is fine). */
  teardown(request: RequestRow): Promise<void>;
  /** Runs one statement already accepted by the SQL guard, as the request's credential. */
  query(request: QueryTarget, statement: string, limits: QueryLimits): Promise<QueryResult>;
}

/** Settings of environments and the query proxy, from the `envsvc` and `query` config sections. */
export interface EnvironmentSettings {
  provider: 'builtin' | 'http';
  url: string;
  token: string;
  timeoutMs: number;
  query: QueryLimits;
}

export function environmentSettings(config: Config): EnvironmentSettings {
  return {
    provider: config.envsvc.provider,
    url: config.envsvc.url,
    token: config.envsvc.token,
    timeoutMs: config.envsvc.timeout,
    query: {
      statementTimeoutMs: config.query.statement_timeout,
      maxRows: config.query.max_rows,
      maxBytes: config.query.max_bytes,
    },
  };
}

export type ProviderFactory = (database: Database, config: Config) => EnvironmentProvider;
