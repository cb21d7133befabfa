// The role session on PGlite: the setup, the statement and ROLLBACK in one exclusive transaction (nothing else runs
// on its single connection meanwhile), planning statements that combine relations first (PGLITE_MAX_PLAN_COST).
import { invalid } from '../../../core/errors.ts';
import { columnsOf, TIME_TYPE_OIDS } from './results.ts';
import { checkGate, inactiveOr, type RoleSession, sessionSetupSql } from './session.ts';

/**
 * PGlite cannot stop a running statement, and it runs on the service's own thread. Statements that combine relations
 * are planned first (EXPLAIN) and refused above this estimated cost, in PostgreSQL's cost units: measured on the demo
 * data, 20-50 ms of PGlite work per 1000 units, so about one to three seconds at most (a 4-way cross join of a
 * 120-row view is 1.8M units, ~35 s). Provisioning ANALYZEs the sources on PGlite so the estimates mean something.
 */
export const PGLITE_MAX_PLAN_COST = 50_000;

interface PgliteTx {
  query(
    text: string,
    params?: unknown[],
    options?: { rowMode?: 'array'; parsers?: Record<number, (value: string) => unknown> },
  ): Promise<{ rows: unknown[]; fields: Array<{ name: string; dataTypeID: number }> }>;
  exec(text: string): Promise<unknown>;
  rollback(): Promise<void>;
}
export interface Pglite {
  transaction<T>(fn: (tx: PgliteTx) => Promise<T>): Promise<T>;
}

const TEXT_TIMES: Record<number, (value: string) => string> = Object.fromEntries(
  TIME_TYPE_OIDS.map((oid) => [oid, (v: string) => v]),
);

/** PGlite: one exclusive transaction (nothing else runs on the single connection meanwhile). */
export function pgliteSession(pglite: Pglite): RoleSession {
  return async (statement, options) => {
    try {
      return await pglite.transaction(async (tx) => {
        checkGate(await tx.exec(sessionSetupSql(options)), options);
        if (options.maxPlanCost !== undefined) {
          const plan = await tx.query(`EXPLAIN (FORMAT JSON) ${statement}`, [], { rowMode: 'array' });
          const cost = planCost(plan.rows[0]?.[0 as never]);
          if (cost > options.maxPlanCost) {
            await tx.rollback();
            throw invalid(
              'query_too_expensive',
              `The statement's estimated cost (${Math.round(cost)}) is above what this local database runs (${options.maxPlanCost}): it cannot stop a running statement. Narrow it (fewer joins, a WHERE, a LIMIT).`,
            );
          }
        }
        // PGlite's query() uses the extended protocol: several statements in one message are refused.
        const result = await tx.query(statement, [], { rowMode: 'array', parsers: TEXT_TIMES });
        await tx.rollback();
        return { rows: result.rows as unknown[][], columns: columnsOf(result.fields), truncated: false };
      });
    } catch (err) {
      throw inactiveOr(err);
    }
  };
}

function planCost(value: unknown): number {
  const plan = (typeof value === 'string' ? JSON.parse(value) : value) as Array<{
    Plan?: { 'Total Cost'?: number };
  }>;
  return Number(plan?.[0]?.Plan?.['Total Cost'] ?? Number.POSITIVE_INFINITY);
}
