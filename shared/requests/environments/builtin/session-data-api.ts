// The role session on the RDS Data API: a Data API transaction with the setup, then the statement, one call each,
// then RollbackTransaction. The answer's values are read as node-postgres would give them.
import { sql, TransactionRollbackError } from 'drizzle-orm';
import type { Database } from '../../../core/db/database.ts';
import { inactiveOr, type RoleSession, sessionSetupSql } from './session.ts';

interface DataApiField {
  isNull?: boolean;
  stringValue?: string;
  longValue?: number;
  doubleValue?: number;
  booleanValue?: boolean;
  blobValue?: Uint8Array;
  arrayValue?: DataApiArray;
}
interface DataApiArray {
  stringValues?: unknown[];
  longValues?: unknown[];
  doubleValues?: unknown[];
  booleanValues?: unknown[];
  arrayValues?: DataApiArray[];
}
interface DataApiAnswer {
  records?: DataApiField[][];
  columnMetadata?: Array<{ name?: string; typeName?: string }>;
}

const arrayValue = (a: DataApiArray): unknown[] =>
  a.arrayValues?.map(arrayValue) ?? a.stringValues ?? a.longValues ?? a.doubleValues ?? a.booleanValues ?? [];

/** A Data API value as node-postgres would give it (JSON parsed; timestamps stay text for normalizeValue). */
function dataApiValue(field: DataApiField, type: string): unknown {
  if (field.isNull) return null;
  if (field.stringValue !== undefined) {
    const v = field.stringValue;
    if (type === 'json' || type === 'jsonb') return JSON.parse(v);
    return v;
  }
  if (field.blobValue !== undefined) return field.blobValue;
  if (field.arrayValue !== undefined) return arrayValue(field.arrayValue);
  return field.longValue ?? field.doubleValue ?? field.booleanValue ?? null;
}

/**
 * RDS Data API: a Data API transaction (drizzle's, over the same client): the setup, then the statement, one call
 * each (one statement per call is how the Data API works), then RollbackTransaction.
 */
export function dataApiSession(database: Database): RoleSession {
  return async (statement, options) => {
    let answer: DataApiAnswer | undefined;
    try {
      await database.db.transaction(async (tx) => {
        try {
          await tx.execute(sql.raw(sessionSetupSql(options, 'single')));
        } catch (err) {
          throw inactiveOr(err);
        }
        answer = (await tx.execute(sql.raw(statement))) as unknown as DataApiAnswer;
        tx.rollback();
      });
    } catch (err) {
      if (!(err instanceof TransactionRollbackError)) throw err;
    }
    const meta = answer?.columnMetadata ?? [];
    const columns = meta.map((c) => ({ name: c.name ?? '', type: c.typeName ?? '' }));
    const rows = (answer?.records ?? []).map((record) =>
      record.map((field, i) => dataApiValue(field, columns[i]?.type ?? '')),
    );
    return { rows, columns, truncated: false };
  };
}
