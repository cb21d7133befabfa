// The role session on node-postgres: BEGIN with the setup, the statement and ROLLBACK, pipelined in one round trip
// (one write: the socket is corked while they are issued). Rows are counted, in rows and wire bytes, as they arrive
// (CappedQuery, a subclass of node-postgres' Query), and the rest is dropped unparsed once `keep` is used up.
import { columnsOf, TIME_TYPE_OIDS } from './results.ts';
import { checkGate, inactiveOr, type RoleSession, type SessionOptions, sessionSetupSql } from './session.ts';

interface DataRowMessage {
  length: number;
}
interface PgQueryResult {
  rows: unknown[][];
  fields: Array<{ name: string; dataTypeID: number }>;
}
interface PgPoolClient {
  pipeline: boolean;
  connection?: { stream?: { cork(): void; uncork(): void } };
  query(config: object): Promise<unknown>;
  query(text: string): Promise<unknown>;
  release(err?: boolean): void;
}
export interface PgPool {
  connect(): Promise<PgPoolClient>;
}

type CappedQueryClass = new (
  config: { text: string; rowMode: 'array'; queryMode: 'extended' },
  keep: SessionOptions['keep'],
  callback: (err: Error | null, result: PgQueryResult) => void,
) => { truncated: boolean };

let cappedQueryClass: Promise<CappedQueryClass> | undefined;
/**
 * node-postgres' Query with a running budget: each DataRow message is counted as it arrives (its wire length), and
 * once the rows or bytes of `keep` are used up the rest is dropped unparsed, so memory stays within the budget
 * (plus one row, which cappedStatement bounds) however large the result is.
 */
function loadCappedQuery(): Promise<CappedQueryClass> {
  cappedQueryClass ??= import('pg').then(({ default: pg }) => {
    // Timestamps and dates stay text (normalizeValue formats them); everything else parses as usual.
    const textTimes = {
      getTypeParser: (oid: number, format?: 'text' | 'binary') =>
        (TIME_TYPE_OIDS as readonly number[]).includes(oid)
          ? (v: string) => v
          : pg.types.getTypeParser(oid, format ?? 'text'),
    };
    const Query = pg.Query as unknown as new (
      config: object,
    ) => {
      handleDataRow(msg: DataRowMessage): void;
    };
    class CappedQuery extends Query {
      truncated = false;
      #rows = 0;
      #bytes = 0;
      readonly #keep: SessionOptions['keep'];
      constructor(
        config: { text: string; rowMode: 'array'; queryMode: 'extended' },
        keep: SessionOptions['keep'],
        callback: (err: Error | null, result: PgQueryResult) => void,
      ) {
        super({ ...config, callback, types: textTimes });
        this.#keep = keep;
      }
      override handleDataRow(msg: DataRowMessage): void {
        if (this.truncated) return;
        if (this.#keep) {
          this.#bytes += msg.length;
          if (this.#rows >= this.#keep.maxRows || this.#bytes > this.#keep.maxBytes) {
            this.truncated = true;
            return;
          }
        }
        this.#rows += 1;
        super.handleDataRow(msg);
      }
    }
    return CappedQuery;
  });
  return cappedQueryClass;
}

/**
 * node-postgres writes each protocol message with its own write, with TCP_NODELAY: three pipelined queries would be
 * a dozen small packets, each waking the server. Messages issued inside `fn` leave in one write instead.
 */
function corked<T>(conn: PgPoolClient, fn: () => T): T {
  const stream = conn.connection?.stream;
  stream?.cork();
  try {
    return fn();
  } finally {
    stream?.uncork();
  }
}

/** node-postgres: BEGIN with the setup, the statement, and ROLLBACK, pipelined in one round trip (one write). */
export function postgresSession(pool: PgPool): RoleSession {
  return async (statement, options) => {
    const CappedQuery = await loadCappedQuery();
    const conn = await pool.connect();
    let clean = false;
    try {
      // Pipeline mode: the three messages leave together and are answered in order. The first is our own text only
      // (BEGIN and the setup, simple protocol); if it fails, the transaction is aborted and the statement, alone in
      // its extended-protocol message, is refused unexecuted (25P02).
      conn.pipeline = true;
      let query: { truncated: boolean } | undefined;
      const sent = corked(conn, () => {
        const setup = conn.query(`BEGIN TRANSACTION READ ONLY; ${sessionSetupSql(options)}`);
        const result = new Promise<PgQueryResult>((resolve, reject) => {
          query = new CappedQuery(
            { text: statement, rowMode: 'array', queryMode: 'extended' },
            options.keep,
            (err, res) => (err ? reject(err) : resolve(res)),
          );
          void conn.query(query);
        });
        return [setup, result, conn.query('ROLLBACK')] as const;
      });
      const [s, r, rb] = await Promise.allSettled(sent);
      // After ROLLBACK the connection is back to its idle state, whatever happened before it.
      clean = rb.status === 'fulfilled';
      if (s.status === 'rejected') throw inactiveOr(s.reason);
      checkGate(s.value, options);
      if (r.status === 'rejected') throw r.reason;
      return { rows: r.value.rows, columns: columnsOf(r.value.fields), truncated: query?.truncated ?? false };
    } finally {
      conn.pipeline = false;
      conn.release(!clean);
    }
  };
}
