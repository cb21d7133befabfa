// Requests: the data-access requests, filtered by status and risk (kept in the URL); one request's scope, its usage
// events and its moves: approve (notes), deny (reason) while pending, revoke (reason) while approved or active.
import { useState } from 'preact/hooks';
import type { components, operations } from '../../../client/api.ts';
import {
  AnyOptions,
  describeError,
  Empty,
  FilterFold,
  formatTime,
  NOT_ANSWERING,
  OffsetPager,
  Show,
  TableScroll,
  useLoad,
} from '../load.tsx';
import { navigate, pageUrl } from '../router.ts';
import { api, type Session } from '../session.ts';

type Request = components['schemas']['Request'];
type ListQuery = NonNullable<operations['listAdminRequests']['parameters']['query']>;
const STATUSES = ['pending', 'approved', 'active', 'denied', 'revoked', 'expired'] as const;
const RISKS = ['low', 'medium', 'high'] as const;
const PAGE = 20;

export function RequestsPage({ session, query }: { session: Session; query: URLSearchParams }) {
  const client = api(session);
  const [version, setVersion] = useState(0);
  const status = query.get('status') ?? undefined;
  const risk = query.get('risk_level') ?? undefined;
  const offset = Math.max(0, Number(query.get('offset')) || 0);
  const open = query.get('request') ?? undefined;
  const listQuery = { status, risk_level: risk, limit: PAGE, offset, sort: '-created_at' } as ListQuery;
  const list = useLoad(`${JSON.stringify(listQuery)}:${version}`, () =>
    client.GET('/v1/admin/requests', { params: { query: listQuery } }),
  );
  const state = { status, risk_level: risk, offset: offset ? String(offset) : undefined, request: open };
  const go = (changes: Record<string, string | undefined>) =>
    navigate(pageUrl('/requests', { ...state, ...changes }));
  return (
    <>
      <h1>Requests</h1>
      <FilterFold>
        <div class="filters">
          <label>
            Status
            <select
              id="request-status"
              value={status ?? ''}
              onChange={(e) => go({ status: e.currentTarget.value, offset: undefined })}
            >
              <AnyOptions values={STATUSES} />
            </select>
          </label>
          <label>
            Risk
            <select
              value={risk ?? ''}
              onChange={(e) => go({ risk_level: e.currentTarget.value, offset: undefined })}
            >
              <AnyOptions values={RISKS} />
            </select>
          </label>
        </div>
      </FilterFold>
      <div class="split">
        <section aria-label="Requests">
          <Show loaded={list} what="requests">
            {({ data }) =>
              data.requests.length === 0 ? (
                <Empty>No data-access request matches these filters.</Empty>
              ) : (
                <>
                  <TableScroll>
                    <table id="requests">
                      <caption>
                        {offset + 1}–{offset + data.requests.length} of {data.total}, newest first
                      </caption>
                      <thead>
                        <tr>
                          <th scope="col">Title</th>
                          <th scope="col">Status</th>
                          <th scope="col">Risk</th>
                          <th scope="col">Requester</th>
                          <th scope="col">Created</th>
                        </tr>
                      </thead>
                      <tbody>
                        {data.requests.map((r) => (
                          <tr key={r.id} class={r.id === open ? 'selected' : undefined}>
                            <td>
                              <a
                                class="request-link"
                                href={pageUrl('/requests', { ...state, request: r.id })}
                                onClick={(e) => {
                                  e.preventDefault();
                                  go({ request: r.id });
                                }}
                              >
                                {r.title}
                              </a>
                            </td>
                            <td data-status={r.status}>{r.status}</td>
                            <td>{r.risk_level}</td>
                            <td>{r.requester.email}</td>
                            <td>{formatTime(r.created_at)}</td>
                          </tr>
                        ))}
                      </tbody>
                    </table>
                  </TableScroll>
                  <OffsetPager
                    offset={offset}
                    page={PAGE}
                    shown={data.requests.length}
                    total={data.total}
                    go={go}
                  />
                </>
              )
            }
          </Show>
        </section>
        {open && (
          <RequestDetail
            key={open}
            session={session}
            id={open}
            version={version}
            onChanged={() => setVersion((v) => v + 1)}
            onClose={() => go({ request: undefined })}
          />
        )}
      </div>
    </>
  );
}

function RequestDetail({
  session,
  id,
  version,
  onChanged,
  onClose,
}: {
  session: Session;
  id: string;
  version: number;
  onChanged: () => void;
  onClose: () => void;
}) {
  const client = api(session);
  const detail = useLoad(`${id}:${version}`, () =>
    client.GET('/v1/admin/requests/{id}', { params: { path: { id } } }),
  );
  const [message, setMessage] = useState('');
  const [busy, setBusy] = useState(false);
  const act = async (
    action: 'approve' | 'deny' | 'revoke',
    text: string,
  ): Promise<{ error?: unknown; response: Response }> => {
    const path = { params: { path: { id } } };
    if (action === 'approve') {
      return client.POST('/v1/admin/requests/{id}/approve', { ...path, body: text ? { notes: text } : {} });
    }
    if (action === 'deny')
      return client.POST('/v1/admin/requests/{id}/deny', { ...path, body: { reason: text } });
    return client.POST('/v1/requests/{id}/revoke', { ...path, body: text ? { reason: text } : {} });
  };
  const run = async (action: 'approve' | 'deny' | 'revoke', form: HTMLFormElement) => {
    const text = String(new FormData(form).get('text') ?? '').trim();
    setBusy(true);
    setMessage('');
    const { error, response } = await act(action, text).catch(() => ({
      error: { message: NOT_ANSWERING },
      response: new Response(null, { status: 599 }),
    }));
    setBusy(false);
    if (!response.ok) setMessage(describeError(error, response.status));
    else onChanged();
  };
  return (
    <aside id="request-detail" class="card" aria-labelledby="request-detail-title">
      <h2 id="request-detail-title">Request</h2>
      <button type="button" class="close" onClick={onClose}>
        Close
      </button>
      <Show loaded={detail} what="the request">
        {({ data: r }) => (
          <>
            <RequestFacts r={r} />
            {r.status === 'pending' && (
              <>
                <Move
                  id="approve"
                  label="Approve"
                  field="Notes (optional)"
                  busy={busy}
                  onSubmit={(f) => run('approve', f)}
                />
                <Move
                  id="deny"
                  label="Deny"
                  field="Reason (required)"
                  required
                  busy={busy}
                  onSubmit={(f) => run('deny', f)}
                />
              </>
            )}
            {(r.status === 'approved' || r.status === 'active') && (
              <Move
                id="revoke"
                label="Revoke"
                field="Reason (optional)"
                busy={busy}
                onSubmit={(f) => run('revoke', f)}
              />
            )}
            <p class="error" role="alert">
              {message}
            </p>
            <h3>Usage events (newest)</h3>
            {r.usage_events.length === 0 ? (
              <Empty>No query has been run under this request.</Empty>
            ) : (
              <ul id="request-usage">
                {r.usage_events.map((u) => (
                  <li key={u.id}>
                    <time dateTime={u.timestamp}>{formatTime(u.timestamp)}</time>: {u.action_type} from{' '}
                    {u.ip_address || 'an unknown address'}
                  </li>
                ))}
              </ul>
            )}
          </>
        )}
      </Show>
    </aside>
  );
}

function RequestFacts({ r }: { r: Request }) {
  return (
    <dl class="detail">
      <dt>Title</dt>
      <dd>{r.title}</dd>
      <dt>Status</dt>
      <dd id="request-status-value">{r.status}</dd>
      <dt>Environment</dt>
      <dd>{r.environment_status ?? '—'}</dd>
      <dt>Requester</dt>
      <dd>
        {r.requester.name} ({r.requester.email})
      </dd>
      <dt>Justification</dt>
      <dd>{r.business_justification || '—'}</dd>
      <dt>Risk</dt>
      <dd>{r.risk_level}</dd>
      <dt>Valid until</dt>
      <dd>{formatTime(r.valid_until)}</dd>
      {r.approved_by && (
        <>
          <dt>Approved</dt>
          <dd>
            by {r.approved_by}, {formatTime(r.approved_at)}
            {r.approval_notes ? `: ${r.approval_notes}` : ''}
          </dd>
        </>
      )}
      {r.denial_reason && (
        <>
          <dt>Denied</dt>
          <dd id="request-denial-reason">{r.denial_reason}</dd>
        </>
      )}
      <dt>Scope</dt>
      <dd>
        <ul class="scope" id="request-scope">
          {r.scope.datasources.flatMap((ds) =>
            ds.datasets.map((d) => (
              <li key={d.namespace} data-namespace={d.namespace}>
                <strong>{d.namespace}</strong>: {d.source.kind} {d.source.name}
                {d.source.table ? `.${d.source.table}` : ''}, columns {d.columns.join(', ')}
                {d.joins.length ? `; joins ${d.joins.map((j) => j.namespace).join(', ')}` : ''}
                {d.filters ? '; filtered rows' : ''}
              </li>
            )),
          )}
        </ul>
      </dd>
    </dl>
  );
}

function Move({
  id,
  label,
  field,
  required,
  busy,
  onSubmit,
}: {
  id: string;
  label: string;
  field: string;
  required?: boolean;
  busy: boolean;
  onSubmit: (form: HTMLFormElement) => void;
}) {
  return (
    <form
      id={`${id}-form`}
      class="move"
      onSubmit={(e) => {
        e.preventDefault();
        onSubmit(e.currentTarget);
      }}
    >
      <label>
        {field}
        <textarea name="text" id={`${id}-text`} rows={2} required={required} />
      </label>
      <button
        type="submit"
        id={`${id}-button`}
        disabled={busy}
        class={id === 'approve' ? undefined : 'secondary'}
      >
        {label}
      </button>
    </form>
  );
}
