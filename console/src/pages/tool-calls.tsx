// Tool calls: the event browser. Every filter of GET /v1/admin/observability/events, kept in the URL with the page's
// keyset cursor and the open event, so a link shows the same page; a time range from presets or a picker; the
// values each filter can take, from the filter-values route; the count of matching calls, from the summary; a
// detail panel for one event.
import { useEffect, useRef } from 'preact/hooks';
import type { operations } from '../../../client/api.ts';
import { Empty, FilterFold, formatNumber, formatTime, Show, TableScroll, useLoad } from '../load.tsx';
import { RetentionNotice } from '../retention.tsx';
import { navigate, pageUrl } from '../router.ts';
import { api, type Session } from '../session.ts';

type EventQuery = NonNullable<operations['obsListEvents']['parameters']['query']>;
type Filter = Exclude<keyof EventQuery, 'limit' | 'cursor'>;

const CHOICES: Partial<Record<Filter, readonly string[]>> = {
  result: ['allowed', 'denied', 'error'],
  event_type: ['invocation', 'result', 'error'],
};
const FILTERS: readonly { name: Filter; label: string }[] = [
  { name: 'result', label: 'Result' },
  { name: 'event_type', label: 'Event type' },
  { name: 'agent_type', label: 'Agent' },
  { name: 'mcp', label: 'MCP server' },
  { name: 'tool', label: 'Tool' },
  { name: 'deny_code', label: 'Deny code' },
  { name: 'rule', label: 'Rule' },
  { name: 'model', label: 'Model' },
  { name: 'actor', label: 'Actor email' },
  { name: 'group', label: 'Group' },
  { name: 'serial', label: 'Device serial' },
  { name: 'device_id', label: 'Device id' },
  { name: 'session_id', label: 'Session' },
  { name: 'skill', label: 'Skill' },
  { name: 'q', label: 'Text' },
];
/** The range's two ends: in the URL and the API as RFC 3339 UTC, in the picker as a UTC wall-clock minute. */
const ENDS = [
  { name: 'from', label: 'From (UTC)' },
  { name: 'to', label: 'To (UTC)' },
] as const;

type Counted = { values: { value: string; calls: number }[] };
/** What the suggestions read of the filter-values route's answer. */
type FilterValues = Record<
  'agent_type' | 'mcp' | 'tool' | 'deny_code' | 'rule' | 'model' | 'actor' | 'group' | 'session' | 'skill',
  Counted
> & {
  serial: { values: { value: string }[] };
  device: { values: { value: string; serial_number: string }[] };
};
/** The known values of a filter, for its input's suggestions: each with how many calls carry it when counted. */
const SUGGESTIONS: Partial<Record<Filter, (v: FilterValues) => { value: string; label: string }[]>> = {
  agent_type: (v) => counted(v.agent_type.values),
  mcp: (v) => counted(v.mcp.values),
  tool: (v) => counted(v.tool.values),
  deny_code: (v) => counted(v.deny_code.values),
  rule: (v) => counted(v.rule.values),
  model: (v) => counted(v.model.values),
  actor: (v) => counted(v.actor.values),
  group: (v) => counted(v.group.values),
  serial: (v) => v.serial.values.map((x) => ({ value: x.value, label: x.value })),
  device_id: (v) => v.device.values.map((x) => ({ value: x.value, label: x.serial_number })),
  session_id: (v) => counted(v.session.values),
  skill: (v) => counted(v.skill.values),
};
const counted = (values: { value: string; calls: number }[]) =>
  values.map((x) => ({ value: x.value, label: `${formatNumber(x.calls)} calls` }));

const HOUR = 3_600_000;
/** Time presets: each sets from (and to) when chosen, so that the page and its paging cursor keep one range. */
const PRESETS = [
  { id: '1h', label: 'Last hour', from: (now: number) => now - HOUR },
  { id: 'today', label: 'Today', from: (now: number) => now - (now % (24 * HOUR)) },
  { id: '24h', label: 'Last 24 hours', from: (now: number) => now - 24 * HOUR },
  { id: '7d', label: 'Last 7 days', from: (now: number) => now - 7 * 24 * HOUR },
  { id: '30d', label: 'Last 30 days', from: (now: number) => now - 30 * 24 * HOUR },
] as const;

/** An instant as the URL keeps it: RFC 3339 UTC to the minute. */
const minuteIso = (ms: number) => `${new Date(ms - (ms % 60_000)).toISOString().slice(0, 16)}:00Z`;
/** The picker's value (YYYY-MM-DDTHH:MM, read as UTC) of an RFC 3339 instant, and back. */
const pickerValue = (iso: string | undefined) =>
  iso && !Number.isNaN(Date.parse(iso)) ? new Date(iso).toISOString().slice(0, 16) : '';
const fromPicker = (value: string) => (value ? `${value}:00Z` : undefined);

function filtersOf(query: URLSearchParams): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const { name } of [...FILTERS, ...ENDS]) out[name] = query.get(name) ?? undefined;
  return out;
}

export function ToolCallsPage({ session, query }: { session: Session; query: URLSearchParams }) {
  const client = api(session);
  const filters = filtersOf(query);
  const cursor = query.get('cursor') ?? undefined;
  const open = query.get('event') ?? undefined;
  const listQuery = { ...filters, limit: 50, ...(cursor ? { cursor } : {}) } as EventQuery;
  const events = useLoad(JSON.stringify(listQuery), () =>
    client.GET('/v1/admin/observability/events', { params: { query: listQuery } }),
  );
  // The filters' suggestions are asked for once the first page of calls has answered: their statement reads the
  // rollups of the whole range, and on a busy service it must not delay the page's first data.
  const listed = useRef(false);
  if (events.state !== 'loading') listed.current = true;
  const preset = query.get('range') ?? undefined;
  const go = (changes: Record<string, string | undefined>) =>
    navigate(pageUrl('/tool-calls', { ...filters, range: preset, cursor, event: open, ...changes }));
  const choosePreset = (id: string, from: number) =>
    navigate(pageUrl('/tool-calls', { ...filters, from: minuteIso(from), to: undefined, range: id }));
  return (
    <>
      <h1>Tool calls</h1>
      <fieldset class="presets" aria-label="Time range">
        {PRESETS.map((p) => (
          <button
            type="button"
            key={p.id}
            id={`range-${p.id}`}
            aria-pressed={preset === p.id}
            onClick={() => choosePreset(p.id, p.from(Date.now()))}
          >
            {p.label}
          </button>
        ))}
        <button
          type="button"
          id="range-all"
          aria-pressed={!filters.from && !filters.to}
          onClick={() => navigate(pageUrl('/tool-calls', { ...filters, from: undefined, to: undefined }))}
        >
          All stored
        </button>
      </fieldset>
      {listed.current && <FilterSuggestions session={session} from={filters.from} to={filters.to} />}
      <FilterFold>
        <form
          id="event-filters"
          class="filters"
          onSubmit={(e) => {
            e.preventDefault();
            const form = new FormData(e.currentTarget);
            const next: Record<string, string | undefined> = {};
            for (const { name } of FILTERS) next[name] = String(form.get(name) ?? '').trim() || undefined;
            for (const { name } of ENDS) next[name] = fromPicker(String(form.get(name) ?? ''));
            // A range typed in the picker is no longer the preset's.
            const samePreset = next.from === filters.from && next.to === filters.to;
            navigate(pageUrl('/tool-calls', { ...next, range: samePreset ? preset : undefined }));
          }}
        >
          {ENDS.map(({ name, label }) => (
            <label key={`${name}:${filters[name] ?? ''}`} htmlFor={`filter-${name}`}>
              {label}
              <input
                type="datetime-local"
                step={60}
                name={name}
                id={`filter-${name}`}
                value={pickerValue(filters[name])}
              />
            </label>
          ))}
          {FILTERS.map(({ name, label }) => {
            const choices = CHOICES[name];
            return (
              <label key={`${name}:${filters[name] ?? ''}`} htmlFor={`filter-${name}`}>
                {label}
                {choices ? (
                  <select name={name} id={`filter-${name}`} value={filters[name] ?? ''}>
                    <option value="">any</option>
                    {choices.map((c) => (
                      <option key={c} value={c}>
                        {c}
                      </option>
                    ))}
                  </select>
                ) : (
                  <input
                    name={name}
                    id={`filter-${name}`}
                    value={filters[name] ?? ''}
                    list={SUGGESTIONS[name] ? `values-${name}` : undefined}
                    autocomplete="off"
                  />
                )}
              </label>
            );
          })}
          <div class="actions">
            <button type="submit" id="apply-filters">
              Apply filters
            </button>
            <a
              href={pageUrl('/tool-calls')}
              onClick={(e) => {
                e.preventDefault();
                navigate(pageUrl('/tool-calls'));
              }}
            >
              Clear
            </a>
          </div>
        </form>
      </FilterFold>
      {filters.from ? (
        <MatchCount session={session} filters={filters} />
      ) : (
        <p id="match-count" class="state">
          Every stored call, newest first. Choose a time range to count the matching calls.
        </p>
      )}
      {filters.session_id && <SessionSummary session={session} id={filters.session_id} />}
      <div class="split">
        <section aria-label="Events">
          <Show loaded={events} what="tool-call events">
            {({ data }) => (
              <>
                {data.events.length === 0 && (
                  <Empty>
                    {data.archived_before
                      ? `No tool-call event stored in the database matches these filters${cursor ? ' on this page' : ''}. The range reaches before ${formatTime(data.archived_before)}, past the retention window: events before then are no longer in the database (see below).`
                      : cursor
                        ? 'No more events on this page.'
                        : 'No tool-call event matches these filters.'}
                  </Empty>
                )}
                {filters.from && (
                  // A range that begins before the cutoff: said before its events.
                  <RetentionNotice retention={data} id="events-retention" />
                )}
                {data.events.length > 0 && (
                  <TableScroll>
                    <table id="events">
                      <caption>Newest first{cursor ? ' (a later page)' : ''}</caption>
                      <thead>
                        <tr>
                          <th scope="col">Time</th>
                          <th scope="col">Result</th>
                          <th scope="col">Agent</th>
                          <th scope="col">MCP server · tool</th>
                          <th scope="col">Actor</th>
                          <th scope="col">Duration</th>
                          <th scope="col">Reason</th>
                        </tr>
                      </thead>
                      <tbody>
                        {data.events.map((ev) => (
                          <tr key={ev.id} class={ev.id === open ? 'selected' : undefined}>
                            <td class="time">
                              <a
                                href={pageUrl('/tool-calls', { ...filters, cursor, event: ev.id })}
                                id={`event-link-${ev.id}`}
                                class="event-link"
                                onClick={(e) => {
                                  e.preventDefault();
                                  go({ event: ev.id });
                                }}
                              >
                                {formatTime(ev.event_time)}
                              </a>
                            </td>
                            <td>
                              <span class={`result ${ev.result}`}>{ev.result}</span>
                              {ev.deny_code ? ` ${ev.deny_code}` : ''}
                            </td>
                            <td>{ev.agent_type}</td>
                            <td>
                              {ev.mcp_name} · {ev.tool}
                            </td>
                            <td>{ev.actor_email ?? '—'}</td>
                            <td class="num">{formatNumber(ev.duration_ms)} ms</td>
                            <td class="reason">{ev.deny_reason ?? ev.error_message ?? ''}</td>
                          </tr>
                        ))}
                      </tbody>
                    </table>
                  </TableScroll>
                )}
                {!filters.from && (
                  // The end of a walk without `from`: newest first, the events before the cutoff would come next.
                  <RetentionNotice retention={data} id="events-retention" />
                )}
                <nav class="pager" aria-label="Pages">
                  {cursor && (
                    <button
                      type="button"
                      id="first-page"
                      onClick={() => go({ cursor: undefined, event: undefined })}
                    >
                      First page
                    </button>
                  )}
                  {data.next_cursor && (
                    <button
                      type="button"
                      id="next-page"
                      onClick={() => go({ cursor: data.next_cursor ?? undefined, event: undefined })}
                    >
                      Next page
                    </button>
                  )}
                </nav>
              </>
            )}
          </Show>
        </section>
        {open && (
          <EventDetail
            session={session}
            id={open}
            onClose={() => {
              go({ event: undefined });
              // Back to where the reader was: the event's row.
              document.getElementById(`event-link-${open}`)?.focus();
            }}
            onSession={(sessionId) => navigate(pageUrl('/tool-calls', { session_id: sessionId }))}
          />
        )}
      </div>
    </>
  );
}

/**
 * The values each filter can take in the range (the filter-values route; its default range, the last 7 days, when
 * none is chosen), as suggestions of the filter inputs: free text still goes, for a value not yet seen.
 */
function FilterSuggestions({ session, from, to }: { session: Session; from?: string; to?: string }) {
  const values = useLoad(`values:${from}:${to}`, () =>
    api(session).GET('/v1/admin/observability/filters', {
      params: { query: { ...(from ? { from } : {}), ...(to ? { to } : {}), limit: 50 } },
    }),
  );
  if (values.state !== 'ready') return null;
  return (
    <>
      {FILTERS.map(({ name }) => {
        const suggest = SUGGESTIONS[name];
        if (!suggest) return null;
        return (
          <datalist id={`values-${name}`} key={name}>
            {suggest(values.data.data.values).map((v) => (
              <option key={v.value} value={v.value}>
                {v.label}
              </option>
            ))}
          </datalist>
        );
      })}
    </>
  );
}

/**
 * How many calls match: the summary's total for the same filters and range, its totals alone (no lists to
 * compute). The summary counts whole hours (and, from its rollups, calls past the events' retention), so the line
 * names the range it counted.
 */
function MatchCount({ session, filters }: { session: Session; filters: Record<string, string | undefined> }) {
  const summaryQuery = {
    ...Object.fromEntries(Object.entries(filters).filter(([, v]) => v !== undefined)),
    parts: 'totals',
  } as NonNullable<operations['obsObservabilitySummary']['parameters']['query']>;
  const count = useLoad(`count:${JSON.stringify(summaryQuery)}`, () =>
    api(session).GET('/v1/admin/observability/summary', { params: { query: summaryQuery } }),
  );
  if (count.state !== 'ready') return <p id="match-count" class="state" aria-busy="true" />;
  const { totals, range } = count.data.data;
  const widened = range.from !== filters.from || (filters.to !== undefined && range.to !== filters.to);
  return (
    <p id="match-count" aria-live="polite">
      <strong>{formatNumber(totals.calls)}</strong> {totals.calls === 1 ? 'call matches' : 'calls match'} from{' '}
      {formatTime(range.from)} to {formatTime(range.to)}
      {widened ? ' (counted in whole hours)' : ''}.
    </p>
  );
}

/** The session view: totals over every event of the session (its events are the list below, filtered by it). */
function SessionSummary({ session, id }: { session: Session; id: string }) {
  const loaded = useLoad(`session:${id}`, () =>
    api(session).GET('/v1/admin/observability/sessions/{session_id}', {
      params: { path: { session_id: id }, query: { limit: 1 } },
    }),
  );
  return (
    <section aria-labelledby="session-title" class="card" id="session-summary">
      <h2 id="session-title">Session {id}</h2>
      <Show loaded={loaded} what="the session">
        {({ data }) => {
          const s = data.session;
          return (
            <>
              <p id="session-totals">
                {formatNumber(s.calls)} calls from {formatTime(s.first_event_at)} to{' '}
                {formatTime(s.last_event_at)}: {formatNumber(s.allowed)} allowed, {formatNumber(s.denied)}{' '}
                denied, {formatNumber(s.errors)} errors; tokens {formatNumber(s.tokens_in)} in,{' '}
                {formatNumber(s.tokens_out)} out; {formatNumber(s.duration_ms)} ms in all. Devices:{' '}
                {s.devices.map((d) => d.serial_number).join(', ')}
                {s.devices_total > s.devices.length ? ` and ${s.devices_total - s.devices.length} more` : ''}.
                Agents: {s.agent_types.join(', ')}. Actors: {s.actors.join(', ') || 'none'}.
              </p>
              <RetentionNotice retention={data} id="session-retention" kind="session" />
            </>
          );
        }}
      </Show>
    </section>
  );
}

function EventDetail({
  session,
  id,
  onClose,
  onSession,
}: {
  session: Session;
  id: string;
  onClose: () => void;
  onSession: (sessionId: string) => void;
}) {
  const detail = useLoad(id, () =>
    api(session).GET('/v1/admin/observability/events/{id}', { params: { path: { id } } }),
  );
  const heading = useRef<HTMLHeadingElement>(null);
  // Opened: in view and focused, so a keyboard or screen reader user is there; Escape closes it.
  useEffect(() => {
    heading.current?.scrollIntoView({ block: 'nearest' });
    heading.current?.focus({ preventScroll: true });
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') onClose();
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, [id]);
  return (
    <aside id="event-detail" class="card" aria-labelledby="event-detail-title">
      <h2 id="event-detail-title" tabIndex={-1} ref={heading}>
        Event {id}
      </h2>
      <button type="button" class="close" onClick={onClose}>
        Close
      </button>
      <Show loaded={detail} what="the event">
        {({ data: ev }) => (
          <dl class="detail">
            <dt>Result</dt>
            <dd>
              <span class={`result ${ev.result}`}>{ev.result}</span>
            </dd>
            {ev.result === 'denied' && (
              <>
                <dt>Deny code</dt>
                <dd id="detail-deny-code">{ev.deny_code ?? '—'}</dd>
                <dt>Reason</dt>
                <dd id="detail-deny-reason">{ev.deny_reason ?? '—'}</dd>
                <dt>Rule</dt>
                <dd id="detail-rule">{ev.rule_applied ?? '—'}</dd>
              </>
            )}
            {ev.result === 'error' && (
              <>
                <dt>Error</dt>
                <dd class="pre" id="detail-error">
                  {ev.error_message ?? '—'}
                </dd>
              </>
            )}
            <dt>Time</dt>
            <dd>{formatTime(ev.event_time)}</dd>
            <dt>Device</dt>
            <dd>{ev.serial_number}</dd>
            <dt>Agent · model</dt>
            <dd>
              {ev.agent_type} · {ev.model ?? 'no model'}
            </dd>
            <dt>MCP server · tool</dt>
            <dd>
              {ev.mcp_name} · {ev.tool} ({ev.event_type})
            </dd>
            <dt>Actor</dt>
            <dd>{ev.actor_email ?? '—'}</dd>
            <dt>Session</dt>
            <dd>
              {ev.session_id ? (
                <a
                  id="detail-session"
                  href={pageUrl('/tool-calls', { session_id: ev.session_id })}
                  onClick={(e) => {
                    e.preventDefault();
                    onSession(ev.session_id as string);
                  }}
                >
                  {ev.session_id}
                </a>
              ) : (
                '—'
              )}
            </dd>
            <dt>Tokens in / out</dt>
            <dd>
              {formatNumber(ev.tokens_in)} / {formatNumber(ev.tokens_out)}
            </dd>
            <dt>Duration</dt>
            <dd>{formatNumber(ev.duration_ms)} ms</dd>
            <dt>Prompt</dt>
            <dd class="pre">{ev.prompt ?? '—'}</dd>
          </dl>
        )}
      </Show>
    </aside>
  );
}
