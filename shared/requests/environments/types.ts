// One interface for the environments a request runs in. `builtin` provisions inside the service's own PostgreSQL;
// `http` asks an external environment service. The lifecycle (shared/requests/lifecycle.ts) only sees this.
import type { Config } from '../../core/config/schema.ts';
import type { Database } from '../../core/db/database.ts';
import type { CheckedStatement } from '../query/guard.ts';
import type { RequestRow } from '../requests.ts';
import type { TunnelView } from '../schemas.ts';

/** What running a query needs to know of the request. */
export type QueryTarget = Pick<RequestRow, 'id' | 'environmentId'>;

/**
 * The provider found, inside the query's own transaction, that the request is no longer active (revoked or expired
 * since it was read): nothing ran. The query proxy reads the request again to answer 404/409 precisely.
 */
export class EnvironmentInactiveError extends Error {
  override name = 'EnvironmentInactiveError';
}

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

/** What running queries needs of a provider (the query function builds only this, see querierFor). */
export interface EnvironmentQuerier {
  readonly name: 'builtin' | 'http';
  /**
   * query() itself verifies that the request is active, in the transaction that runs the statement (builtin). When
   * false the proxy reads the request's status before every query.
   */
  readonly checksActive: boolean;
  /** The engine cannot stop a running statement (PGlite): the SQL guard also refuses what can run without end. */
  readonly withoutTimeout: boolean;
  /**
   * Runs one statement already accepted by the SQL guard, as the request's credential, capped in rows and bytes
   * while the result is fetched. Throws EnvironmentInactiveError when it finds the request no longer active.
   */
  query(request: QueryTarget, statement: CheckedStatement, limits: QueryLimits): Promise<QueryResult>;
}

export interface EnvironmentProvider extends EnvironmentQuerier {
  /** Creates the environment of an approved request; throws on failure (the lifecycle records it). */
  provision(request: RequestRow): Promise<Provisioned>;
  /** Removes it; idempotent (tearing down what is gone is fine). */
  teardown(request: RequestRow): Promise<void>;
  /**
   * Removes every environment whose request is no longer approved or active (a teardown lost to a crash or a
   * failure) and returns those request ids; providers that keep nothing themselves have none.
   */
  sweep?(): Promise<string[]>;
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
