// The DSN chooses the driver. Forms:
//   ""  or "pglite:<dir>"      PGlite (embedded), data kept in <dir> (default ./.data/pglite)
//   "pglite:memory"             PGlite in memory (tests)
//   "postgres://..." / "postgresql://..."   node-postgres
//   "data-api://<database>?resourceArn=<cluster ARN>&secretArn=<secret ARN>[&region=..][&endpoint=..]"
//                               RDS Data API (Aurora), through drizzle's aws-data-api/pg driver
export type ParsedDsn =
  | { kind: 'pglite'; dataDir: string | undefined }
  | { kind: 'postgres'; url: string }
  | {
      kind: 'data-api';
      database: string;
      resourceArn: string;
      secretArn: string;
      region: string | undefined;
      endpoint: string | undefined;
    };

export const DEFAULT_PGLITE_DIR = './.data/pglite';

export class DsnError extends Error {
  override name = 'DsnError';
}

export function parseDsn(dsn: string): ParsedDsn {
  const text = dsn.trim();
  if (text === '') return { kind: 'pglite', dataDir: DEFAULT_PGLITE_DIR };
  if (text === 'pglite:memory' || text === 'pglite:') return { kind: 'pglite', dataDir: undefined };
  if (text.startsWith('pglite:')) return { kind: 'pglite', dataDir: text.slice('pglite:'.length) };
  if (text.startsWith('postgres://') || text.startsWith('postgresql://'))
    return { kind: 'postgres', url: text };
  if (text.startsWith('data-api://')) {
    const url = new URL(text);
    const database = decodeURIComponent(url.hostname || url.pathname.replace(/^\/+/, ''));
    const resourceArn = url.searchParams.get('resourceArn') ?? '';
    const secretArn = url.searchParams.get('secretArn') ?? '';
    if (!database || !resourceArn || !secretArn) {
      throw new DsnError('db.dsn: a data-api DSN needs a database name, resourceArn and secretArn');
    }
    return {
      kind: 'data-api',
      database,
      resourceArn,
      secretArn,
      region: url.searchParams.get('region') ?? undefined,
      endpoint: url.searchParams.get('endpoint') ?? undefined,
    };
  }
  throw new DsnError('db.dsn: expected pglite:memory, pglite:<dir>, postgres://..., or data-api://...');
}

/** The DSN with any password removed, for logs. */
export function describeDsn(parsed: ParsedDsn): string {
  switch (parsed.kind) {
    case 'pglite':
      return parsed.dataDir ? `pglite:${parsed.dataDir}` : 'pglite:memory';
    case 'postgres': {
      const url = new URL(parsed.url);
      url.password = '';
      return `postgres://${url.username ? `${url.username}@` : ''}${url.host}${url.pathname}`;
    }
    case 'data-api':
      return `data-api://${parsed.database} (${parsed.resourceArn})`;
  }
}
