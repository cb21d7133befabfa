// Alerts: the fleet's alerts newest first, filtered by kind and status (kept in the URL), paged by cursor, each open
// one acknowledged with an optional note (the API records who, and audits it); below them, the export destinations'
// lag (export-lag.tsx).
import { useState } from 'preact/hooks';
import type { operations } from '../../../client/api.ts';
import {
  ColumnHeads,
  Empty,
  FilterFold,
  FilterSelect,
  formatNumber,
  formatTime,
  Show,
  TableScroll,
  useLoad,
} from '../load.tsx';
import { navigate, pageUrl } from '../router.ts';
import { api, type Session } from '../session.ts';
import { ExportLag } from './export-lag.tsx';

type AlertsQuery = NonNullable<operations['listAlerts']['parameters']['query']>;
const KINDS = ['new_server', 'version_changed', 'source_changed', 'denied_server', 'denied_spike'] as const;
const STATUSES = ['open', 'acknowledged'] as const;
const PAGE = 50;

export function AlertsPage({ session, query }: { session: Session; query: URLSearchParams }) {
  const client = api(session);
  const kind = query.get('kind') ?? undefined;
  const status = query.get('status') ?? undefined;
  const cursor = query.get('cursor') ?? undefined;
  const [done, setDone] = useState(0);
  const [problem, setProblem] = useState('');
  const listQuery = { kind, status, cursor, limit: PAGE } as AlertsQuery;
  const alerts = useLoad(`${JSON.stringify(listQuery)}#${done}`, () =>
    client.GET('/v1/admin/alerts', { params: { query: listQuery } }),
  );
  const acknowledge = async (id: string, note: string) => {
    const res = await client.POST('/v1/admin/alerts/{id}/acknowledge', {
      params: { path: { id } },
      body: note ? { note } : {},
    });
    setProblem(res.error ? res.error.message : '');
    setDone((n) => n + 1);
  };
  return (
    <>
      <h1>Alerts</h1>
      <FilterFold>
        <form
          class="filters"
          id="alert-filters"
          onSubmit={(e) => {
            e.preventDefault();
            const form = new FormData(e.currentTarget);
            navigate(
              pageUrl('/alerts', {
                kind: String(form.get('kind') ?? '') || undefined,
                status: String(form.get('status') ?? '') || undefined,
              }),
            );
          }}
        >
          <FilterSelect
            key={`kind:${kind ?? ''}`}
            name="kind"
            label="Kind"
            value={kind}
            values={KINDS}
            show={(k) => k.replaceAll('_', ' ')}
          />
          <FilterSelect
            key={`status:${status ?? ''}`}
            name="status"
            label="Status"
            value={status}
            values={STATUSES}
          />
          <div class="actions">
            <button type="submit">Apply filters</button>
          </div>
        </form>
      </FilterFold>
      {problem && (
        <p class="state error" role="alert">
          {problem}
        </p>
      )}
      <Show loaded={alerts} what="alerts">
        {({ data }) =>
          data.alerts.length === 0 ? (
            <Empty>No alert matches these filters.</Empty>
          ) : (
            <>
              <TableScroll>
                <table id="alerts">
                  <caption>Alerts, newest first: one per change, with the devices it covers</caption>
                  <ColumnHeads names={['First seen', 'Kind', 'What', 'Devices', 'Status']} />
                  <tbody>
                    {data.alerts.map((a) => (
                      <tr key={a.id} data-alert={a.id}>
                        <td class="time">{formatTime(a.first_seen_at)}</td>
                        <td>{a.kind.replaceAll('_', ' ')}</td>
                        <td>{a.subject}</td>
                        <td class="num">{formatNumber(a.device_count)}</td>
                        <td>
                          {a.status === 'open' ? (
                            <form
                              class="acknowledge"
                              onSubmit={(e) => {
                                e.preventDefault();
                                const note = String(new FormData(e.currentTarget).get('note') ?? '').trim();
                                void acknowledge(a.id, note);
                              }}
                            >
                              <label>
                                Note
                                <input name="note" maxLength={1000} />
                              </label>
                              <button type="submit">Acknowledge</button>
                            </form>
                          ) : (
                            <span class="acknowledged">
                              Acknowledged by {a.acknowledged_by} {formatTime(a.acknowledged_at)}
                              {a.acknowledge_note ? `: ${a.acknowledge_note}` : ''}
                            </span>
                          )}
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableScroll>
              {data.next_cursor && (
                <nav class="pager" aria-label="Pages">
                  <button
                    type="button"
                    onClick={() =>
                      navigate(pageUrl('/alerts', { kind, status, cursor: data.next_cursor ?? undefined }))
                    }
                  >
                    Next page
                  </button>
                </nav>
              )}
            </>
          )
        }
      </Show>
      <ExportLag session={session} />
    </>
  );
}
