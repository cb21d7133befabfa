// Audit log: the records, filtered by action, actor, resource and source (kept in the URL), newest first, and the
// hash chain's verification said plainly.
import type { operations } from '../../../client/api.ts';
import {
  ColumnHeads,
  Empty,
  FilterSelect,
  formatNumber,
  formatTime,
  OffsetPager,
  Show,
  useLoad,
} from '../load.tsx';
import { navigate, pageUrl } from '../router.ts';
import { api, type Session } from '../session.ts';

type AuditQuery = NonNullable<operations['listAuditLogs']['parameters']['query']>;
const FILTERS = [
  { name: 'action_type', label: 'Action' },
  { name: 'actor_email', label: 'Actor email' },
  { name: 'resource_type', label: 'Resource type' },
  { name: 'resource_id', label: 'Resource id' },
] as const;
const SOURCES = ['api', 'env-svc', 'logshipper'] as const;
const PAGE = 50;

export function AuditLogPage({ session, query }: { session: Session; query: URLSearchParams }) {
  const client = api(session);
  const filters: Record<string, string | undefined> = {};
  for (const name of [...FILTERS.map((f) => f.name), 'source']) filters[name] = query.get(name) ?? undefined;
  const offset = Math.max(0, Number(query.get('offset')) || 0);
  const listQuery = { ...filters, sort: '-created_at', limit: PAGE, offset } as AuditQuery;
  const logs = useLoad(JSON.stringify(listQuery), () =>
    client.GET('/v1/admin/audit-logs', { params: { query: listQuery } }),
  );
  const verify = useLoad('verify', () => client.GET('/v1/admin/audit-logs/verify'));
  const go = (changes: Record<string, string | undefined>) =>
    navigate(pageUrl('/audit-log', { ...filters, offset: offset ? String(offset) : undefined, ...changes }));
  return (
    <>
      <h1>Audit log</h1>
      <section aria-labelledby="chain-title">
        <h2 id="chain-title">Hash chain</h2>
        <Show loaded={verify} what="the chain's verification">
          {({ data: v }) =>
            v.intact ? (
              <p class="state ok" id="chain-result">
                Intact: {formatNumber(v.checked)} records checked, each hash chained to the one before.
                {v.head ? ` Head: record ${v.head.seq}, hash ${v.head.hash.slice(0, 16)}…` : ''}
              </p>
            ) : (
              <p class="state error" role="alert" id="chain-result">
                Broken: {formatNumber(v.checked)} records checked; the chain breaks at record{' '}
                {v.broken_at ? `${v.broken_at.seq} (${formatTime(v.broken_at.timestamp)})` : 'unknown'}.
                History was changed after it was written.
              </p>
            )
          }
        </Show>
      </section>
      <form
        class="filters"
        id="audit-filters"
        onSubmit={(e) => {
          e.preventDefault();
          const form = new FormData(e.currentTarget);
          const next: Record<string, string | undefined> = {};
          for (const name of Object.keys(filters))
            next[name] = String(form.get(name) ?? '').trim() || undefined;
          navigate(pageUrl('/audit-log', next));
        }}
      >
        {FILTERS.map(({ name, label }) => (
          <label key={`${name}:${filters[name] ?? ''}`}>
            {label}
            <input name={name} value={filters[name] ?? ''} />
          </label>
        ))}
        <FilterSelect
          key={`source:${filters.source ?? ''}`}
          name="source"
          label="Source"
          value={filters.source}
          values={SOURCES}
        />
        <div class="actions">
          <button type="submit">Apply filters</button>
        </div>
      </form>
      <Show loaded={logs} what="audit records">
        {({ data }) =>
          data.logs.length === 0 ? (
            <Empty>No audit record matches these filters.</Empty>
          ) : (
            <>
              <table id="audit-logs">
                <caption>
                  {data.offset + 1}–{data.offset + data.logs.length} of {formatNumber(data.total)}, newest
                  first
                </caption>
                <ColumnHeads names={['Time', 'Action', 'Actor', 'Resource', 'Source', 'Address']} />
                <tbody>
                  {data.logs.map((l) => (
                    <tr key={l.id}>
                      <td class="time">{formatTime(l.timestamp)}</td>
                      <td>{l.action_type}</td>
                      <td>{l.actor_email || '—'}</td>
                      <td>
                        {l.resource_type} {l.resource_id}
                      </td>
                      <td>{l.source}</td>
                      <td>{l.ip_address || '—'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
              <OffsetPager
                offset={data.offset}
                page={data.limit}
                shown={data.logs.length}
                total={data.total}
                go={go}
              />
            </>
          )
        }
      </Show>
    </>
  );
}
