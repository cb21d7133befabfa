// Summary: calls over time stacked by result, p50 / p95 / p99 durations over time, deny rate, duration percentiles,
// top tools, MCP servers and actors, over 24 h, 7 d or 30 d with minute, hourly or daily buckets (kept in the URL).
import type { components } from '../../../client/api.ts';
import { CallsChart, DurationSeriesChart, DurationsChart, hasDurations } from '../charts.tsx';
import { PageLink } from '../link.tsx';
import { Empty, formatNumber, formatPercent, Show, TableScroll, useLoad } from '../load.tsx';
import { navigate, pageUrl } from '../router.ts';
import { api, type Session } from '../session.ts';

type Summary = components['schemas']['ObservabilitySummary'];
const RANGES = { '24h': 24, '7d': 7 * 24, '30d': 30 * 24 } as const;
type Range = keyof typeof RANGES;
const BUCKETS = ['minute', 'hour', 'day'] as const;
type Bucket = (typeof BUCKETS)[number];

export function SummaryPage({ session, query }: { session: Session; query: URLSearchParams }) {
  const range: Range = (query.get('range') as Range) in RANGES ? (query.get('range') as Range) : '24h';
  const requested = query.get('bucket') as Bucket;
  const bucket: Bucket = BUCKETS.includes(requested) ? requested : range === '24h' ? 'hour' : 'day';
  const summary = useLoad(`${range}:${bucket}`, () => {
    const to = new Date();
    const from = new Date(to.getTime() - RANGES[range] * 3_600_000);
    return api(session).GET('/v1/admin/observability/summary', {
      params: { query: { from: from.toISOString(), to: to.toISOString(), bucket } },
    });
  });
  const set = (changes: Record<string, string | undefined>) =>
    navigate(pageUrl('/summary', { range, bucket, ...changes }));
  return (
    <>
      <h1>Summary</h1>
      <div class="filters">
        <label>
          Range
          <select id="summary-range" value={range} onChange={(e) => set({ range: e.currentTarget.value })}>
            <option value="24h">last 24 hours</option>
            <option value="7d">last 7 days</option>
            <option value="30d">last 30 days</option>
          </select>
        </label>
        <label>
          Buckets
          <select id="summary-bucket" value={bucket} onChange={(e) => set({ bucket: e.currentTarget.value })}>
            <option value="minute">minutes</option>
            <option value="hour">hours</option>
            <option value="day">days</option>
          </select>
        </label>
      </div>
      <Show loaded={summary} what="the summary">
        {({ data }) =>
          data.totals.calls === 0 ? <Empty>No tool call in this range.</Empty> : <Report s={data} />
        }
      </Show>
    </>
  );
}

function Report({ s }: { s: Summary }) {
  const t = s.totals;
  /** The tool calls behind a row: its filters over the summary's range. */
  const calls = (filters: Record<string, string>) =>
    pageUrl('/tool-calls', { ...filters, from: s.range.from, to: s.range.to });
  const ms = (v: number | null) => (v === null ? '—' : `${formatNumber(v)} ms`);
  return (
    <>
      <dl class="numbers" id="summary-totals">
        <div>
          <dt>calls</dt>
          <dd data-total="calls">{formatNumber(t.calls)}</dd>
        </div>
        <div>
          <dt>denied</dt>
          <dd>{formatNumber(t.denied)}</dd>
        </div>
        <div>
          <dt>errors</dt>
          <dd>{formatNumber(t.errors)}</dd>
        </div>
        <div>
          <dt>deny rate</dt>
          <dd>{formatPercent(t.deny_rate)}</dd>
        </div>
        <div>
          <dt>p50 / p95 / p99</dt>
          <dd>
            {ms(t.duration_p50_ms)} / {ms(t.duration_p95_ms)} / {ms(t.duration_p99_ms)}
          </dd>
        </div>
        <div>
          <dt>tokens in / out</dt>
          <dd>
            {formatNumber(t.tokens_in)} / {formatNumber(t.tokens_out)}
          </dd>
        </div>
      </dl>
      <h2>Calls over time</h2>
      <CallsChart s={s} />
      <h2>Durations over time</h2>
      {hasDurations(s) ? (
        <DurationSeriesChart s={s} />
      ) : (
        <Empty>No call with a duration in this range.</Empty>
      )}
      <h2>Durations of the top tools</h2>
      {s.top.tools.length === 0 ? (
        <Empty>No tool in this range.</Empty>
      ) : (
        <DurationsChart tools={s.top.tools} />
      )}
      <h2>Top tools</h2>
      <TableScroll>
        <table>
          <thead>
            <tr>
              <th scope="col">MCP server · tool</th>
              <th scope="col">Calls</th>
              <th scope="col">Deny rate</th>
              <th scope="col">p50</th>
              <th scope="col">p95</th>
              <th scope="col">p99</th>
              <th scope="col">Tokens in / out</th>
            </tr>
          </thead>
          <tbody>
            {s.top.tools.map((x) => (
              <tr key={`${x.mcp_name}/${x.tool}`}>
                <td>
                  <PageLink to={calls({ mcp: x.mcp_name, tool: x.tool })}>
                    {x.mcp_name} · {x.tool}
                  </PageLink>
                </td>
                <td class="num">{formatNumber(x.calls)}</td>
                <td class="num">{formatPercent(x.deny_rate)}</td>
                <td class="num">{ms(x.duration_p50_ms)}</td>
                <td class="num">{ms(x.duration_p95_ms)}</td>
                <td class="num">{ms(x.duration_p99_ms)}</td>
                <td class="num">
                  {formatNumber(x.tokens_in)} / {formatNumber(x.tokens_out)}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableScroll>
      <div class="columns">
        <TopList
          title="Top MCP servers"
          rows={s.top.mcps.map((x) => [x.mcp_name, x.calls, calls({ mcp: x.mcp_name })])}
        />
        <TopList
          title="Top actors"
          rows={s.top.actors.map((x) => [x.actor_email, x.calls, calls({ actor: x.actor_email })])}
        />
        <TopList
          title="Top deny codes"
          rows={s.top.deny_codes.map((x) => [
            x.deny_code,
            x.calls,
            calls({ result: 'denied', deny_code: x.deny_code }),
          ])}
        />
      </div>
    </>
  );
}

/** A top list: each name with its calls, linked to those calls. */
function TopList({ title, rows }: { title: string; rows: [string, number, string][] }) {
  return (
    <section>
      <h3>{title}</h3>
      {rows.length === 0 ? (
        <Empty>None in this range.</Empty>
      ) : (
        <ol>
          {rows.map(([name, calls, to]) => (
            <li key={name}>
              {name ? <PageLink to={to}>{name}</PageLink> : '(none)'}: {formatNumber(calls)}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
