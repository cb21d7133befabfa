// Audit log: the records, filtered by action (picked from those the log holds), actor, resource and source (kept in
// the URL), newest first, routine device records hidden unless asked for; resources by name with a link to their
// page; each row expands to its details; and the hash chain's verification said plainly above it all.
import { useState } from 'preact/hooks';
import type { operations } from '../../../client/api.ts';
import { PageLink } from '../link.tsx';
import {
  ChoiceSelect,
  Empty,
  FilterFold,
  formatNumber,
  formatTime,
  OffsetPager,
  Show,
  TableScroll,
  useLoad,
} from '../load.tsx';
import { navigate, pageUrl } from '../router.ts';
import { api, type Session } from '../session.ts';

type AuditQuery = NonNullable<operations['listAuditLogs']['parameters']['query']>;
type AuditLog =
  operations['listAuditLogs']['responses'][200]['content']['application/json']['data']['logs'][number];
const FILTERS = [
  { name: 'actor_email', label: 'Actor email' },
  { name: 'resource_type', label: 'Resource type' },
  { name: 'resource_id', label: 'Resource id' },
] as const;
const SOURCES = ['api', 'env-svc', 'logshipper'] as const;
const PAGE = 50;

export function AuditLogPage({ session, query }: { session: Session; query: URLSearchParams }) {
  const client = api(session);
  const filters: Record<string, string | undefined> = {};
  for (const name of ['action_type', ...FILTERS.map((f) => f.name), 'source'])
    filters[name] = query.get(name) ?? undefined;
  // Routine records (a laptop's first registration, a key rotation, a dropped partition) are hidden unless asked
  // for, by the checkbox or by picking their action.
  const routine = query.get('routine') === 'show' || filters.action_type ? 'show' : 'hide';
  const offset = Math.max(0, Number(query.get('offset')) || 0);
  const listQuery = { ...filters, routine, sort: '-created_at', limit: PAGE, offset } as AuditQuery;
  const logs = useLoad(JSON.stringify(listQuery), () =>
    client.GET('/v1/admin/audit-logs', { params: { query: listQuery } }),
  );
  // The banner walks on from the last verified point: hashing the whole chain on every load is the verify route's
  // full check, not a page's.
  const verify = useLoad('verify', () =>
    client.GET('/v1/admin/audit-logs/verify', { params: { query: { since: 'verified' } } }),
  );
  const actions = useLoad('actions', () => client.GET('/v1/admin/audit-logs/actions'));
  const shownRoutine = query.get('routine') === 'show' ? 'show' : undefined;
  const go = (changes: Record<string, string | undefined>) =>
    navigate(
      pageUrl('/audit-log', {
        ...filters,
        routine: shownRoutine,
        offset: offset ? String(offset) : undefined,
        ...changes,
      }),
    );
  return (
    <>
      <h1>Audit log</h1>
      <section aria-labelledby="chain-title">
        <h2 id="chain-title">Hash chain</h2>
        <Show loaded={verify} what="the chain's verification">
          {({ data: v }) =>
            v.intact ? (
              <p class="state ok" id="chain-result">
                Intact:{' '}
                {v.verified_from
                  ? `${formatNumber(v.verified_from.count + v.checked)} records, each hash chained to the one before: the first ${formatNumber(v.verified_from.count)} verified by ${formatTime(v.verified_from.verified_at)}, the ${formatNumber(v.checked)} since checked now.`
                  : `${formatNumber(v.checked)} records checked, each hash chained to the one before.`}
                {v.head ? (
                  <>
                    {` Head: record ${v.head.seq}, hash `}
                    <span id="chain-head-hash">{v.head.hash.slice(0, 16)}</span>…
                  </>
                ) : (
                  ''
                )}
              </p>
            ) : (
              <p class="state error" role="alert" id="chain-result">
                Broken: {formatNumber((v.verified_from?.count ?? 0) + v.checked)} records verified; the chain
                breaks at record{' '}
                {v.broken_at ? `${v.broken_at.seq} (${formatTime(v.broken_at.timestamp)})` : 'unknown'}.
                History was changed after it was written.
              </p>
            )
          }
        </Show>
      </section>
      <FilterFold>
        <form
          class="filters"
          id="audit-filters"
          onSubmit={(e) => {
            e.preventDefault();
            const form = new FormData(e.currentTarget);
            const next: Record<string, string | undefined> = {};
            for (const name of Object.keys(filters))
              next[name] = String(form.get(name) ?? '').trim() || undefined;
            next.routine = form.get('routine') === 'show' ? 'show' : undefined;
            navigate(pageUrl('/audit-log', next));
          }}
        >
          <label htmlFor="audit-action">
            Action
            <ChoiceSelect
              id="audit-action"
              name="action_type"
              value={filters.action_type}
              choices={
                actions.state === 'ready'
                  ? actions.data.data.actions.map((a) => ({
                      value: a.action_type,
                      label: `${a.action_type} (${formatNumber(a.records)})`,
                    }))
                  : undefined
              }
            />
          </label>
          {FILTERS.map(({ name, label }) => (
            <label key={`${name}:${filters[name] ?? ''}`}>
              {label}
              <input name={name} value={filters[name] ?? ''} />
            </label>
          ))}
          <label key={`source:${filters.source ?? ''}`}>
            Source
            <select name="source" value={filters.source ?? ''}>
              <option value="">any</option>
              {SOURCES.map((s) => (
                <option key={s} value={s}>
                  {s}
                </option>
              ))}
            </select>
          </label>
          <label class="check" key={`routine:${routine}`}>
            <input
              type="checkbox"
              name="routine"
              value="show"
              id="audit-routine"
              checked={routine === 'show'}
            />
            Show routine device records
          </label>
          <div class="actions">
            <button type="submit" id="apply-audit-filters">
              Apply filters
            </button>
          </div>
        </form>
      </FilterFold>
      <Show loaded={logs} what="audit records">
        {({ data }) =>
          data.logs.length === 0 ? (
            <Empty>No audit record matches these filters.</Empty>
          ) : (
            <>
              <TableScroll>
                <table id="audit-logs">
                  <caption>
                    {data.offset + 1}–{data.offset + data.logs.length} of {formatNumber(data.total)}, newest
                    first
                  </caption>
                  <thead>
                    <tr>
                      <th scope="col">Time</th>
                      <th scope="col">Action</th>
                      <th scope="col">Actor</th>
                      <th scope="col">Resource</th>
                      <th scope="col">Source</th>
                      <th scope="col">Details</th>
                    </tr>
                  </thead>
                  {data.logs.map((l) => (
                    <AuditRow key={l.id} log={l} />
                  ))}
                </table>
              </TableScroll>
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

/** A resource's page in the console, where it has one. */
function resourcePage(log: AuditLog): string | undefined {
  if (log.resource_name === null) return undefined;
  if (log.resource_type === 'device') return pageUrl(`/devices/${log.resource_id}`);
  if (log.resource_type === 'request') return pageUrl('/requests', { request: log.resource_id });
  if (log.resource_type === 'catalog_entry') return pageUrl('/catalog');
  return undefined;
}

/** One record: a row, and below it, once expanded, everything it holds. */
function AuditRow({ log }: { log: AuditLog }) {
  const [open, setOpen] = useState(false);
  const page = resourcePage(log);
  const name = log.resource_name ?? log.resource_id;
  const details = `audit-details-${log.id}`;
  return (
    <tbody>
      <tr>
        <td class="time">{formatTime(log.timestamp)}</td>
        <td>{log.action_type}</td>
        <td>
          {log.actor_email ? (
            <PageLink to={pageUrl('/audit-log', { actor_email: log.actor_email })}>
              {log.actor_email}
            </PageLink>
          ) : (
            '—'
          )}
        </td>
        <td class="resource">
          {log.resource_type}{' '}
          {page ? <PageLink to={page}>{name}</PageLink> : <span title={log.resource_id}>{name || '—'}</span>}
        </td>
        <td>{log.source}</td>
        <td>
          <button
            type="button"
            class="expand"
            aria-expanded={open}
            aria-controls={details}
            onClick={() => setOpen(!open)}
          >
            {open ? 'Hide' : 'Show'}
            <span class="visually-hidden"> details of {log.action_type}</span>
          </button>
        </td>
      </tr>
      {open && (
        <tr id={details} class="details">
          <td colSpan={6}>
            <dl class="detail">
              <dt>Record</dt>
              <dd>{log.id}</dd>
              <dt>Resource id</dt>
              <dd>{log.resource_id || '—'}</dd>
              <dt>Actor id</dt>
              <dd>{log.actor_id || '—'}</dd>
              <dt>Address</dt>
              <dd>{log.ip_address || '—'}</dd>
              <dt>Level</dt>
              <dd>{log.level}</dd>
              {log.environment_name && (
                <>
                  <dt>Environment</dt>
                  <dd>
                    {log.environment_name} ({log.environment_id})
                  </dd>
                </>
              )}
              <dt>Written</dt>
              <dd>{formatTime(log.created_at)}</dd>
              <dt>Details</dt>
              <dd class="pre audit-metadata">{JSON.stringify(log.metadata, null, 2)}</dd>
            </dl>
          </td>
        </tr>
      )}
    </tbody>
  );
}
